package org.holdfast.server.store;

import org.holdfast.common.id.PbnRange;

/** An append needed PBNs past the end of the store's range; nothing was appended. */
public final class PbnRangeFullException extends IllegalStateException {
    private final PbnRange range;

    public PbnRangeFullException(String dir, PbnRange range, long next, int wanted) {
        super("the data store in " + dir + " has handed out its PBN range " + range + " (next PBN " + next + ", " + wanted
                + " wanted): nothing was appended; this node cannot store new blocks until the master assigns it a further range"
                + " (a worker) or the range is set larger");
        this.range = range;
    }

    /** The range that is used up. */
    public PbnRange range() {
        return range;
    }
}
