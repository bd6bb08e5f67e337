package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.holdfast.common.id.PbnRange;
import org.holdfast.server.gc.WorkerCountsFences;
import org.holdfast.server.store.MetadataBatch;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link WorkerSweeps} after a catalog restore: a worker whose counts predate it is never asked to sweep, however idle. */
class WorkerSweepsFenceTest {
    private static final PbnRange RANGE = new PbnRange(1L << 48, (1L << 48) + (1L << 20));

    @TempDir
    Path dir;

    @Test
    void sweep_fencedWorker_refusedAndNoSweepSent_liftedFence_swept() {
        EmbeddedChannel ch = new EmbeddedChannel();
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            WorkerCountsFences fences = new WorkerCountsFences(db);
            try (MetadataBatch b = new MetadataBatch()) {
                fences.put(b, 1, 1L << 52, 1L);
                db.write(b, true);
            }
            RangeSweepLinks links = new RangeSweepLinks();
            links.add(1, new RemoteRangeSweep("w1", RANGE, ch, Duration.ofMinutes(1)));
            // connected, no delta owed, no backup holding it: everything else would let it sweep
            WorkerSweeps sweeps = new WorkerSweeps(links, () -> List.of(1L), id -> 0, WorkerSweeps.SessionHolds.NONE,
                    fences::sweepRefusal, Duration.ofMillis(100), Duration.ZERO);

            List<WorkerSweeps.Outcome> out = sweeps.sweep(1_000L, false);

            assertThat(out).extracting(WorkerSweeps.Outcome::state).containsExactly(WorkerSweeps.State.REFUSED);
            assertThat(out.get(0).detail()).contains("predate this master's catalog restore");
            assertThat((Object) ch.readOutbound()).as("no GC_SWEEP to a worker whose counts may be below the catalog's").isNull();

            fences.clear(1);
            sweeps.sweep(1_000L, false);
            assertThat((Object) ch.readOutbound()).as("asked once the fence is lifted").isNotNull();
        } finally {
            ch.finishAndReleaseAll();
        }
    }

    @Test
    void sweep_workerFencedByItsRegistrationDuringTheRound_noSweepSentOnItsNewLink() {
        EmbeddedChannel before = new EmbeddedChannel();
        EmbeddedChannel after = new EmbeddedChannel();
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            WorkerCountsFences fences = new WorkerCountsFences(db);
            RangeSweepLinks links = new RangeSweepLinks();
            links.add(1, new RemoteRangeSweep("w1", RANGE, before, Duration.ofMinutes(1)));
            boolean[] registered = {false};
            // unfenced when the round looks; then, while it reads the outboxes (or waits for them to drain), the worker registers
            // again with counts this master cannot account for: as MasterLink, the fence is written before the new link goes up
            WorkerSweeps.DeltaOutbox outbox = id -> {
                if (!registered[0]) {
                    registered[0] = true;
                    try (MetadataBatch b = new MetadataBatch()) {
                        fences.put(b, 1, 1L << 52, 1L);
                        db.write(b, true);
                    }
                    links.add(1, new RemoteRangeSweep("w1", RANGE, after, Duration.ofMinutes(1)));
                }
                return 0;
            };
            WorkerSweeps sweeps = new WorkerSweeps(links, () -> List.of(1L), outbox, WorkerSweeps.SessionHolds.NONE,
                    fences::sweepRefusal, Duration.ofMillis(100), Duration.ZERO);

            List<WorkerSweeps.Outcome> out = sweeps.sweep(1_000L, false);

            assertThat(registered[0]).isTrue();
            assertThat((Object) after.readOutbound()).as("no GC_SWEEP on the link whose registration fenced its counts").isNull();
            assertThat((Object) before.readOutbound()).isNull();
            assertThat(out).extracting(WorkerSweeps.Outcome::state).containsExactly(WorkerSweeps.State.REFUSED);
        } finally {
            before.finishAndReleaseAll();
            after.finishAndReleaseAll();
        }
    }
}
