package org.holdfast.server.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 18's replaceable workers, the dedup half: a generated backup stream goes through three
 * in-process workers; one is wiped (a new, empty engine in a new directory), so a repeat of the
 * stream misses what only it held; {@link WorkerIndexRebuild}, fed the stored blocks in PBN order,
 * brings the repeat back to what the never-wiped cluster found, teaching the new worker about as
 * many entries as the old one held (what the others hold is not doubled) and no PBN that does not
 * hold its content (checked against the replay's ground truth).
 */
class WorkerIndexRebuildTest {
    @TempDir
    Path dir;
    private final SteppingClock clock = new SteppingClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final List<LocalDedupWorker> opened = new ArrayList<>();

    @AfterEach
    void closeWorkers() {
        opened.forEach(LocalDedupWorker::close);
    }

    private static SungemSettings settings() {
        return EngineComparisonTest.settingsFor(300_000L * EngineComparisonTest.EXACT_ENTRY_BYTES, 32, false,
                SungemSettings.defaults().stableLevels());
    }

    private LocalDedupWorker worker(int id, String name, SungemSettings s) {
        LocalDedupWorker w = new LocalDedupWorker(id, dir.resolve(name), s, clock);
        opened.add(w);
        return w;
    }

    /** An index over {@code workers}; never closed (it would close the workers, which outlive it). */
    private static ClusterFingerprintIndex index(List<LocalDedupWorker> workers, ClusterMode mode, SungemSettings s) {
        return new ClusterFingerprintIndex(workers, mode, ClusterBroadcast.TWO_PHASE, s.uSegment(), Math.max(1, s.uContainer() / 2));
    }

    /** Hits of a lookup-only repeat of the stream: {found, found with a PBN that does not hold the content}. */
    static long[] repeat(FingerprintIndex index, BackupStreamGenerator gen, EngineReplay truth) {
        long[] out = new long[2];
        gen.generate(new BackupStreamGenerator.Sink() {
            private DedupStream stream;
            private byte[] fps = new byte[0];
            private long[] pbns = new long[0];

            @Override
            public void beginBackup(int volume, int day) {
                stream = index.openStream("volume-" + volume);
            }

            @Override
            public void run(long[] content, int n) {
                if (pbns.length < n) {
                    fps = new byte[n * 32];
                    pbns = new long[n];
                }
                for (int i = 0; i < n; i++) {
                    BackupStreamGenerator.fingerprint(content[i], fps, i);
                }
                stream.lookup(fps, n, pbns);
                for (int i = 0; i < n; i++) {
                    if (pbns[i] != 0) {
                        out[0]++;
                        if (truth.contentOf(pbns[i]) != content[i]) {
                            out[1]++;
                        }
                    }
                }
            }

            @Override
            public void endBackup(int volume, int day) {
                stream.close();
            }

            @Override
            public void endDay(int day) {
            }
        });
        return out;
    }

    /** Feeds the stored blocks 1..stored (PBN order, runs of 10,000 as a store read would) to the rebuild. */
    static WorkerIndexRebuild.Counts rebuild(WorkerIndexRebuild r, EngineReplay truth, long from, long to) {
        int run = 10_000;
        long[] pbns = new long[run];
        byte[] keys = new byte[run * 32];
        for (long p = from; p <= to; ) {
            int n = 0;
            for (; n < run && p <= to; n++, p++) {
                pbns[n] = p;
                BackupStreamGenerator.fingerprint(truth.contentOf(p), keys, n);
            }
            r.teach(pbns, keys, n);
        }
        r.flushTarget();
        return r.counts();
    }

    @Test
    void rebuild_wipedWorkerNearest_repeatFindsWhatItFoundBeforeAndNothingIsInvented() {
        SungemSettings s = settings();
        BackupStreamGenerator gen = new BackupStreamGenerator(BackupStreamGenerator.Params.small());
        List<LocalDedupWorker> workers = new ArrayList<>(List.of(worker(0, "w0", s), worker(1, "w1", s), worker(2, "w2", s)));
        EngineReplay truth = EngineReplay.run(index(workers, ClusterMode.NEAREST, s), gen, () -> clock.advance(Duration.ofDays(1)));
        long stored = truth.result().stored();
        long[] before = repeat(index(workers, ClusterMode.NEAREST, s), gen, truth);
        long oldHeld = workers.get(1).load().storedEntries();

        workers.set(1, worker(1, "w1-new", s)); // the disk is lost: the old engine is not used again
        long[] wiped = repeat(index(workers, ClusterMode.NEAREST, s), gen, truth);
        WorkerIndexRebuild.Counts c;
        long t0 = System.nanoTime();
        try (WorkerIndexRebuild r = new WorkerIndexRebuild(workers, 1, ClusterMode.NEAREST, ClusterBroadcast.TWO_PHASE, s.uSegment())) {
            c = rebuild(r, truth, 1, stored);
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        long[] after = repeat(index(workers, ClusterMode.NEAREST, s), gen, truth);
        System.out.printf("rebuild nearest: %d stored in %.2f s (%.0f blocks/s), worker 1 held %d; repeat found %d before, %d wiped,"
                + " %d after; %s%n", stored, seconds, stored / seconds, oldHeld, before[0], wiped[0], after[0], c);

        assertThat(oldHeld).as("the wiped worker held a share").isGreaterThan(stored / 10);
        assertThat((double) wiped[0]).as("the wiped cluster misses much of the stream").isLessThan(before[0] * 0.95);
        assertThat((double) after[0]).as("after the rebuild").isGreaterThanOrEqualTo(before[0] * 0.99);
        assertThat(new long[] {before[1], wiped[1], after[1]}).as("PBNs found that do not hold the content").containsOnly(0L);
        assertThat(c.blocksRead()).isEqualTo(stored);
        assertThat(c.taught() + c.heldByOthers() + c.alreadyHeld()).isEqualTo(stored);
        assertThat(c.alreadyHeld()).isZero();
        assertThat((double) c.taught()).as("taught, against what the wiped worker held (the others' entries not doubled)")
                .isBetween(oldHeld * 0.97, oldHeld * 1.05);
        assertThat(workers.get(1).load().storedEntries()).isEqualTo(c.taught());

        // a second run (as after a cancelled one) finds the target's entries and teaches almost nothing again
        try (WorkerIndexRebuild again = new WorkerIndexRebuild(workers, 1, ClusterMode.NEAREST, ClusterBroadcast.TWO_PHASE,
                s.uSegment())) {
            WorkerIndexRebuild.Counts twice = rebuild(again, truth, 1, 60_000);
            assertThat(twice.alreadyHeld()).as("held by the target already").isGreaterThan(0);
            assertThat((double) twice.taught()).as("taught twice").isLessThan(twice.blocksRead() * 0.02);
        }
    }

    @Test
    void rebuild_wipedWorkerHash_teachesOnlyTheKeysHashingToIt() {
        SungemSettings s = settings();
        BackupStreamGenerator gen = new BackupStreamGenerator(new BackupStreamGenerator.Params(4, 20_000, 0.7, 4, 0.015, 2048, 7));
        List<LocalDedupWorker> workers = new ArrayList<>(List.of(worker(0, "w0", s), worker(1, "w1", s), worker(2, "w2", s)));
        EngineReplay truth = EngineReplay.run(index(workers, ClusterMode.HASH, s), gen, () -> clock.advance(Duration.ofDays(1)));
        long stored = truth.result().stored();
        long[] before = repeat(index(workers, ClusterMode.HASH, s), gen, truth);

        workers.set(2, worker(2, "w2-new", s));
        long[] wiped = repeat(index(workers, ClusterMode.HASH, s), gen, truth);
        WorkerIndexRebuild.Counts c;
        try (WorkerIndexRebuild r = new WorkerIndexRebuild(workers, 2, ClusterMode.HASH, ClusterBroadcast.TWO_PHASE, s.uSegment())) {
            c = rebuild(r, truth, 1, stored);
        }
        long[] after = repeat(index(workers, ClusterMode.HASH, s), gen, truth);
        System.out.printf("rebuild hash: %d stored; repeat found %d before, %d wiped, %d after; %s%n", stored, before[0], wiped[0],
                after[0], c);

        assertThat((double) wiped[0]).isLessThan(before[0] * 0.8);
        assertThat((double) after[0]).isGreaterThanOrEqualTo(before[0] * 0.99);
        assertThat(new long[] {before[1], wiped[1], after[1]}).containsOnly(0L);
        byte[] key = new byte[32];
        long hashesHere = 0;
        for (long p = 1; p <= stored; p++) {
            BackupStreamGenerator.fingerprint(truth.contentOf(p), key, 0);
            hashesHere += HashSplitDedupStream.workerOf(key, 0, 3) == 2 ? 1 : 0;
        }
        assertThat(c.taught()).as("the keys hashing to the target").isEqualTo(hashesHere);
        assertThat(c.heldByOthers()).isEqualTo(stored - hashesHere);
    }

    @Test
    void new_targetOutsideTheWorkers_refused() {
        assertThatThrownBy(() -> new WorkerIndexRebuild(List.of(), 0, ClusterMode.NEAREST, ClusterBroadcast.FULL, 64))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("target position 0 is not one of the 0 workers");
    }

    @Test
    void teach_closed_refused() {
        SungemSettings s = SungemFingerprintIndexTest.smallSettings();
        WorkerIndexRebuild r = new WorkerIndexRebuild(List.of(worker(0, "one", s)), 0, ClusterMode.NEAREST, ClusterBroadcast.FULL,
                s.uSegment());
        r.close();
        assertThatThrownBy(() -> r.teach(new long[1], new byte[32], 1)).isInstanceOf(IllegalStateException.class);
    }
}
