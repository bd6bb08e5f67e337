package org.holdfast.client.upload;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * An ENTRIES run sent and not yet fully answered: its LBNs, and for each entry where its payload
 * sits in {@code slab} ({@code -1} for a zero block). The run's reference on the slab is dropped
 * when its NEED asks for nothing or the last BLOCKS group of this run has been written.
 */
final class PendingRun {
    final long startLbn;
    final int count;
    final int[] payloadOffsets;
    final PayloadWindow.Slab slab; // null if the run has no payloads
    final AtomicInteger groupsLeft = new AtomicInteger();

    PendingRun(long startLbn, int count, int[] payloadOffsets, PayloadWindow.Slab slab) {
        this.startLbn = startLbn;
        this.count = count;
        this.payloadOffsets = payloadOffsets;
        this.slab = slab;
    }
}
