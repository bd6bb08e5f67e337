package org.holdfast.server.store;

/**
 * A read of a PBN the location index does not hold (never stored, or freed): corrupt data to a
 * caller whose catalog references it, as before; typed so that a worker can answer a PBN below its
 * next one (handed out, then freed or lost) as a damaged block rather than a failed call.
 */
public final class BlockNotStoredException extends CorruptDataException {
    private final long pbn;

    public BlockNotStoredException(String path, long pbn) {
        super("data-store", path, "pbn " + pbn, "no location for this PBN (never stored, or freed)");
        this.pbn = pbn;
    }

    /** The PBN read. */
    public long pbn() {
        return pbn;
    }
}
