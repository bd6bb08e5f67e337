package org.holdfast.gc.gma;

import org.holdfast.common.id.PbnRange;

/**
 * Where a PBN's slot lies in a GMA over one PBN range: chunk indexes count from the range, slot 1
 * of chunk 0 holding PBN {@code first - 1} (a PBN the range's store never hands out). For
 * {@link PbnRange#STANDALONE} that is PBN 0, the layout of every GMA before ranges existed, so a
 * standalone GMA's bytes are unchanged.
 */
public record GmaLayout(PbnRange range) {
    /** The layout of a standalone server's GMA (base PBN 0). */
    public static final GmaLayout STANDALONE = new GmaLayout(PbnRange.STANDALONE);

    public GmaLayout {
        if (range == null) {
            throw new IllegalArgumentException("a GMA layout needs a PBN range");
        }
    }

    /** The PBN in slot 1 of chunk 0. */
    public long base() {
        return range.first() - 1;
    }

    /** Chunk that holds {@code pbn}. */
    public long chunkOf(long pbn) {
        return (pbn - base()) / GmaFormat.PBNS_PER_CHUNK;
    }

    /** Slot index of {@code pbn} inside its chunk (1-based; 0 is the header). */
    public int slotOf(long pbn) {
        return (int) ((pbn - base()) % GmaFormat.PBNS_PER_CHUNK) + 1;
    }

    /** The PBN held in slot {@code slot} of chunk {@code chunk}. */
    public long pbnAt(long chunk, int slot) {
        return base() + chunk * GmaFormat.PBNS_PER_CHUNK + slot - 1;
    }

    /** The number of chunks that hold every PBN below {@code pbnLimit} (0 if it lies at or below the base). */
    public long chunksBelow(long pbnLimit) {
        return pbnLimit <= base() ? 0 : (pbnLimit - base() + GmaFormat.PBNS_PER_CHUNK - 1) / GmaFormat.PBNS_PER_CHUNK;
    }

    /** True if GC metadata may be kept for {@code pbn} (the range's PBNs). */
    public boolean holds(long pbn) {
        return range.contains(pbn);
    }

    /**
     * Refuses an update of {@code pbn} outside the range with an error naming both; {@code what}
     * says what was refused ("a BOSC update").
     */
    public void requireHolds(long pbn, String what) {
        if (!range.contains(pbn)) {
            throw new IllegalArgumentException(what + " of PBN " + pbn + " is refused: this GC metadata covers the PBN range "
                    + range + (pbn <= 0 ? " and PBN 0 is no block" : ", the PBN belongs to another node's range")
                    + "; nothing was logged or applied (route the update to the node that owns the PBN)");
        }
    }
}
