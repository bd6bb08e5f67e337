package org.holdfast.client.scan;

import java.util.Arrays;
import org.holdfast.common.id.Fingerprint;

/**
 * Decides which blocks changed since the last committed snapshot by comparing their new
 * fingerprints with the ones in the trusted previous state. Without a previous state (full mode)
 * every block counts as changed, zero blocks included, because the server must hear of every LBN.
 * Not thread-safe.
 */
public final class ChangeDetector {
    private final StateFile.PreviousState previous;
    private byte[] old = new byte[0];

    /** Compares against {@code previous}, or treats everything as changed if it is null. */
    public ChangeDetector(StateFile.PreviousState previous) {
        this.previous = previous;
    }

    /** True if blocks are compared against a previous state (incremental mode). */
    public boolean incremental() {
        return previous != null;
    }

    /**
     * Sets {@code changed[i]} for each of {@code blocks} blocks from {@code firstLbn} whose
     * fingerprint (packed in {@code fingerprints}) differs from the previous state; returns how many.
     */
    public int detect(long firstLbn, int blocks, byte[] fingerprints, boolean[] changed) {
        if (previous == null) {
            Arrays.fill(changed, 0, blocks, true);
            return blocks;
        }
        int bytes = blocks * Fingerprint.BYTES;
        if (old.length < bytes) {
            old = new byte[bytes];
        }
        previous.read(firstLbn, blocks, old, 0);
        int n = 0;
        for (int i = 0; i < blocks; i++) {
            int off = i * Fingerprint.BYTES;
            changed[i] = Arrays.mismatch(old, off, off + Fingerprint.BYTES, fingerprints, off, off + Fingerprint.BYTES) >= 0;
            if (changed[i]) {
                n++;
            }
        }
        return n;
    }
}
