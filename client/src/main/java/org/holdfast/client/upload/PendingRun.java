package org.holdfast.client.upload;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * An ENTRIES run sent and not yet fully answered: its LBNs, and for each entry where its payload
 * sits in {@code slab} ({@code -1} for a zero block). The slab goes back to the window when the
 * last BLOCKS group of this run has been written.
 */
final class PendingRun {
    final long startLbn;
    final int count;
    final int[] payloadOffsets;
    final byte[] slab;
    final AtomicInteger groupsLeft = new AtomicInteger();

    PendingRun(long startLbn, int count, int[] payloadOffsets, byte[] slab) {
        this.startLbn = startLbn;
        this.count = count;
        this.payloadOffsets = payloadOffsets;
        this.slab = slab;
    }
}
