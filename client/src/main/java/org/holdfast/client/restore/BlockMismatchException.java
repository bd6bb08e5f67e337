package org.holdfast.client.restore;

/** A restored block that does not decode, or whose SHA-256 differs from its fingerprint: never written. */
public final class BlockMismatchException extends RuntimeException {
    private final long lbn;

    public BlockMismatchException(long lbn, String why) {
        super("block " + lbn + ": " + why);
        this.lbn = lbn;
    }

    /** The block that failed. */
    public long lbn() {
        return lbn;
    }

    /** Why it failed, without the LBN. */
    public String why() {
        String m = getMessage();
        return m.substring(m.indexOf(": ") + 2);
    }
}
