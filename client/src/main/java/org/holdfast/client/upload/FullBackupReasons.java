package org.holdfast.client.upload;

import org.holdfast.client.progress.Sizes;

/** The agent's own reasons for a full backup, worded for the admin who reads them on stderr and in {@code fullReason}. */
final class FullBackupReasons {
    private FullBackupReasons() {
    }

    /** The state file was written for a source of another size (a resize, or the wrong {@code --source}). */
    static String sizeChanged(long stateBytes, long sourceBytes) {
        return "volume size changed from " + Sizes.format(stateBytes) + " to " + Sizes.format(sourceBytes)
                + " (" + stateBytes + " to " + sourceBytes + " bytes)";
    }

    /**
     * The server's newest snapshot is not the state file's. When the state file's is the newer one the server no longer
     * has it, which an admin should hear in those words: after a catalog restore it is the expected sight, otherwise a
     * surprise worth a look.
     */
    static String parentDiffers(String volume, long serverNewest, long stateSequence) {
        String text = "the server's newest snapshot is " + serverNewest + ", the state file's is " + stateSequence;
        if (serverNewest < stateSequence) {
            text += " (the server no longer has " + volume + "@" + stateSequence + ": its catalog was restored from a"
                    + " backup, or that snapshot was deleted)";
        }
        return text;
    }
}
