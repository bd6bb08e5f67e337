package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.embedded.EmbeddedChannel;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.holdfast.common.id.PbnRange;
import org.junit.jupiter.api.Test;

/** {@link WorkerSweeps} when the master's outbox cannot be read while it waits for a worker's deltas to drain. */
class WorkerSweepsOutboxTest {
    private static final PbnRange RANGE = new PbnRange(1L << 40, (1L << 40) + (1L << 20));

    @Test
    void sweep_outboxFailsWhileDraining_workerSkippedRoundGoesOn() {
        EmbeddedChannel ch = new EmbeddedChannel();
        try {
            RangeSweepLinks links = new RangeSweepLinks();
            links.add(1, new RemoteRangeSweep("w1", RANGE, ch, Duration.ofMinutes(1)));
            AtomicInteger reads = new AtomicInteger();
            WorkerSweeps sweeps = new WorkerSweeps(links, () -> List.of(1L), id -> {
                if (reads.incrementAndGet() == 1) {
                    return 3; // deltas still on their way: the round waits for them
                }
                throw new IllegalStateException("catalog read failed");
            }, WorkerSweeps.SessionHolds.NONE, Duration.ofSeconds(1), Duration.ofSeconds(5));

            List<WorkerSweeps.Outcome> out = sweeps.sweep(1_000L, false);

            assertThat(out).hasSize(1);
            assertThat(out.get(0).state()).isEqualTo(WorkerSweeps.State.DELTAS_PENDING);
            assertThat(reads.get()).isEqualTo(2);
            assertThat((Object) ch.readOutbound()).as("no GC_SWEEP sent to a worker that may lack deltas").isNull();
        } finally {
            ch.finishAndReleaseAll();
        }
    }
}
