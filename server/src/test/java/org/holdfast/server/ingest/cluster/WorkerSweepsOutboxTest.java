package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.embedded.EmbeddedChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.holdfast.common.id.PbnRange;
import org.junit.jupiter.api.Test;

/** {@link WorkerSweeps} while it waits for workers' deltas to drain: all workers at once, an outbox that cannot be read. */
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

    @Test
    void sweep_threeWorkersOweDeltas_theirDrainsAreAwaitedTogetherWithBackedOffReads() {
        EmbeddedChannel ch1 = new EmbeddedChannel();
        EmbeddedChannel ch2 = new EmbeddedChannel();
        EmbeddedChannel ch3 = new EmbeddedChannel();
        try {
            RangeSweepLinks links = new RangeSweepLinks();
            links.add(1, new RemoteRangeSweep("w1", RANGE, ch1, Duration.ofMinutes(1)));
            links.add(2, new RemoteRangeSweep("w2", new PbnRange(RANGE.limit(), RANGE.limit() + RANGE.size()), ch2, Duration.ofMinutes(1)));
            links.add(3, new RemoteRangeSweep("w3", new PbnRange(RANGE.limit() + RANGE.size(), RANGE.limit() + 2 * RANGE.size()), ch3,
                    Duration.ofMinutes(1)));
            Map<Long, AtomicInteger> reads = new ConcurrentHashMap<>();
            List<Long> order = new java.util.concurrent.CopyOnWriteArrayList<>();
            WorkerSweeps sweeps = new WorkerSweeps(links, () -> List.of(1L, 2L, 3L), id -> {
                order.add(id);
                int n = reads.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
                return id == 1 && n >= 3 ? 0 : 5; // worker 1's deltas arrive during the wait, the others' never
            }, WorkerSweeps.SessionHolds.NONE, Duration.ofMillis(200), Duration.ofMillis(1500));

            long start = System.nanoTime();
            List<WorkerSweeps.Outcome> out = sweeps.sweep(1_000L, false);
            Duration took = Duration.ofNanos(System.nanoTime() - start);

            assertThat(out).extracting(WorkerSweeps.Outcome::state).containsExactly(WorkerSweeps.State.NO_ANSWER,
                    WorkerSweeps.State.DELTAS_PENDING, WorkerSweeps.State.DELTAS_PENDING);
            assertThat(took).as("the drain wait (1.5 s) was waited").isGreaterThanOrEqualTo(Duration.ofMillis(1400));
            // one drain wait for all, not one after the other: workers 2 and 3 were read in turns throughout (on the
            // reads' order, not on the wall time, which a loaded machine stretches past what waits one after the other take)
            List<Long> twoAndThree = order.stream().filter(id -> id != 1).toList();
            for (int i = 1; i < twoAndThree.size(); i++) {
                assertThat(twoAndThree.get(i)).as("read %d of workers 2 and 3: %s", i, twoAndThree).isNotEqualTo(twoAndThree.get(i - 1));
            }
            assertThat((Object) ch1.readOutbound()).as("worker 1 asked once drained").isNotNull();
            assertThat((Object) ch2.readOutbound()).as("worker 2 never asked").isNull();
            assertThat((Object) ch3.readOutbound()).isNull();
            assertThat(reads.get(2L).get()).as("reads back off (20 ms doubling to 500 ms), not every 20 ms").isBetween(4, 12);
        } finally {
            ch1.finishAndReleaseAll();
            ch2.finishAndReleaseAll();
            ch3.finishAndReleaseAll();
        }
    }

    @Test
    void sweep_backupHeldOnAnEndedLink_heldNotAskedAndTheOutboxReadAfterTheHolds() {
        EmbeddedChannel ch = new EmbeddedChannel();
        try {
            RangeSweepLinks links = new RangeSweepLinks();
            links.add(1, new RemoteRangeSweep("w1", RANGE, ch, Duration.ofMinutes(1)));
            List<String> calls = new ArrayList<>();
            int[] held = {2};
            WorkerSweeps sweeps = new WorkerSweeps(links, () -> List.of(1L), id -> {
                calls.add("outbox");
                return 0;
            }, range -> {
                calls.add("holds " + range);
                return held[0];
            }, Duration.ofMillis(100), Duration.ZERO);

            WorkerSweeps.Outcome o = sweeps.sweep(1_000L, false).get(0);
            assertThat(o.state()).isEqualTo(WorkerSweeps.State.HELD);
            assertThat(o.detail()).contains("2 backups in progress protected blocks on it over an earlier connection")
                    .contains("not swept until they end");
            assertThat((Object) ch.readOutbound()).as("no GC_SWEEP while held").isNull();

            calls.clear();
            held[0] = 0;
            assertThat(sweeps.sweep(1_000L, false).get(0).state()).isEqualTo(WorkerSweeps.State.NO_ANSWER);
            // a commit writes its counts before its release lifts the hold: the outbox is read again after the holds
            assertThat(calls).containsExactly("outbox", "holds " + RANGE, "outbox");
            assertThat((Object) ch.readOutbound()).as("asked once the hold lifted").isNotNull();
        } finally {
            ch.finishAndReleaseAll();
        }
    }
}
