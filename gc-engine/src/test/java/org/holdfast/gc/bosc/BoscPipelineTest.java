package org.holdfast.gc.bosc;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.ReentrantLock;
import org.holdfast.gc.GmaProbe;
import org.holdfast.gc.gma.GmaChunk.UpdateKinds;
import org.holdfast.gc.gma.GmaFormat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BoscPipelineTest {
    @TempDir
    Path dir;

    private static BoscSettings settings() {
        return BoscSettings.defaults().withCommitIdle(Duration.ofMillis(2));
    }

    /** Operation i adds +1 to RC of a few PBNs spread over many chunks, deterministically. */
    private static UpdateBatch op(int i) {
        UpdateBatch b = new UpdateBatch();
        Random r = new Random(i);
        for (int k = 0; k < 5; k++) {
            b.add(UpdateKinds.RC_ADD, 1 + r.nextInt(200_000), 1);
        }
        b.add(UpdateKinds.RAISE_EXPIRY, 1 + r.nextInt(200_000), 1000L + i);
        return b;
    }

    private static TreeMap<Long, String> expectedAfter(int ops) {
        Path d = null;
        TreeMap<Long, long[]> m = new TreeMap<>();
        for (int i = 1; i <= ops; i++) {
            UpdateBatch b = op(i);
            for (int k = 0; k < b.size(); k++) {
                long[] s = m.computeIfAbsent(b.pbn(k), x -> new long[4]);
                if (b.kind(k) == UpdateKinds.RC_ADD) {
                    s[0] += b.value(k);
                } else {
                    s[3] = Math.max(s[3], b.value(k));
                }
                s[2] = GmaFormat.FLAG_USED;
            }
        }
        TreeMap<Long, String> out = new TreeMap<>();
        m.forEach((k, s) -> out.put(k, s[0] + "/" + s[1] + "/" + s[2] + "/" + s[3]));
        return out;
    }

    @Test
    void appendGroups_manyProducers_groupCommitSharesWrites() throws Exception {
        int threads = 8;
        int perThread = 500;
        try (BoscPipeline p = BoscPipeline.open(dir, settings())) {
            List<Thread> ts = new ArrayList<>();
            long[] ids = {0};
            for (int t = 0; t < threads; t++) {
                Thread th = new Thread(() -> {
                    for (int i = 0; i < perThread; i++) {
                        p.appendSingle(UpdateKinds.RC_ADD, 1 + (i % 1000), 1);
                    }
                });
                ts.add(th);
                th.start();
            }
            for (Thread th : ts) {
                th.join();
            }
            p.commitAll();
            long sum = 0;
            for (int i = 1; i <= 1000; i++) {
                sum += GmaProbe.rc(p, i);
            }
            assertThat(sum).isEqualTo((long) threads * perThread);
            assertThat(p.updatesLogged()).isEqualTo((long) threads * perThread);
            assertThat(p.logBatches()).isLessThan((long) threads * perThread);
            assertThat(ids[0]).isZero();
        }
    }

    @Test
    void appendSingles_streamOfSmallBatches_fewForcedWrites_allDurableAndReplayed() {
        long[] pbns = new long[64];
        try (BoscPipeline p = BoscPipeline.open(dir, settings())) {
            for (int round = 0; round < 200; round++) {
                for (int i = 0; i < pbns.length; i++) {
                    pbns[i] = 1 + round * 64L + i;
                }
                p.appendSingles(UpdateKinds.RAISE_EXPIRY, pbns, 0, pbns.length, 5000 + round);
            }
            p.awaitDurable();
            // 200 appends share a few group-commit writes instead of one forced write each
            assertThat(p.logBatches()).isLessThan(50);
            assertThat(p.updatesLogged()).isEqualTo(200 * 64);
            p.abandon(); // crash: nothing committed to the GMA is assumed
        }
        try (BoscPipeline p = BoscPipeline.open(dir, settings())) {
            assertThat(GmaProbe.expiry(p, 1)).isEqualTo(5000);
            assertThat(GmaProbe.expiry(p, 200 * 64)).isEqualTo(5199);
        }
    }

    @Test
    void committer_pendingChunks_committedInDiskOrderFromCursor() throws Exception {
        List<long[]> passes = new CopyOnWriteArrayList<>();
        try (BoscPipeline p = BoscPipeline.open(dir, settings().withCommitters(1))) {
            p.commitObserver = passes::add;
            // hold chunk 0 so the committer cannot finish anything while we queue scattered updates
            Random r = new Random(3);
            for (int i = 0; i < 300; i++) {
                p.appendSingle(UpdateKinds.RC_ADD, 1 + r.nextInt(100 * GmaFormat.PBNS_PER_CHUNK), 1);
            }
            p.commitAll();
        }
        assertThat(passes).isNotEmpty();
        for (long[] pass : passes) {
            int descents = 0;
            for (int i = 1; i < pass.length; i++) {
                assertThat(pass[i]).isNotEqualTo(pass[i - 1]);
                if (pass[i] < pass[i - 1]) {
                    descents++;
                }
            }
            // ascending from the cursor, wrapping around at most once
            assertThat(descents).isLessThanOrEqualTo(1);
        }
    }

    @Test
    void replay_wholeLogAppliedTwice_sameState() {
        BoscSettings noCheckpoint = settings().withAdvanceCheckpoint(false);
        TreeMap<Long, String> first;
        try (BoscPipeline p = BoscPipeline.open(dir, noCheckpoint)) {
            for (int i = 1; i <= 200; i++) {
                p.appendGroup(i, op(i));
            }
            first = GmaProbe.dump(p);
            p.abandon(); // checkpoint still at LSN 1: the whole log is replayed on open
        }
        assertThat(first).isEqualTo(expectedAfter(200));
        try (BoscPipeline p = BoscPipeline.open(dir, noCheckpoint)) {
            assertThat(p.replayedRecords()).isEqualTo(200 * 6);
            assertThat(p.updatesSkipped()).isEqualTo(200 * 6);
            assertThat(p.updatesApplied()).isZero();
            assertThat(p.lastOpId()).isEqualTo(200);
            assertThat(GmaProbe.dump(p)).isEqualTo(first);
        }
        try (BoscPipeline p = BoscPipeline.open(dir, settings())) {
            assertThat(GmaProbe.dump(p)).isEqualTo(first);
        }
    }

    @Test
    void crash_abandonWithoutClose_stateIsAPrefixAndRedriveCompletesIt() {
        for (int round = 0; round < 5; round++) {
            Path d = dir.resolve("r" + round);
            int total = 300;
            try (BoscPipeline p = BoscPipeline.open(d, settings())) {
                for (int i = 1; i <= total; i++) {
                    p.appendGroup(i, op(i));
                    if (i == 50 + round * 40) {
                        p.abandon();
                        break;
                    }
                }
            } catch (IllegalStateException expected) {
                // close() after abandon is a no-op; nothing else may fail
                throw expected;
            }
            long last;
            try (BoscPipeline p = BoscPipeline.open(d, settings())) {
                last = p.lastOpId();
                assertThat(last).isBetween(0L, 50L + round * 40);
                assertThat(GmaProbe.dump(p)).isEqualTo(expectedAfter((int) last));
                for (int i = (int) last + 1; i <= total; i++) {
                    p.appendGroup(i, op(i));
                }
                assertThat(GmaProbe.dump(p)).isEqualTo(expectedAfter(total));
            }
            try (BoscPipeline p = BoscPipeline.open(d, settings())) {
                assertThat(p.lastOpId()).isEqualTo(total);
                assertThat(GmaProbe.dump(p)).isEqualTo(expectedAfter(total));
            }
        }
    }

    @Test
    void backpressure_queuesFull_producerBlocksAndNothingIsDropped() throws Exception {
        BoscSettings small = settings().withQueueLimits(100, 50).withCommitters(1);
        try (BoscPipeline p = BoscPipeline.open(dir, small)) {
            ReentrantLock chunk0 = p.gma().lock(0);
            chunk0.lock(); // the committer cannot drain chunk 0
            int n = 5000;
            Thread producer = new Thread(() -> {
                for (int i = 0; i < n; i++) {
                    p.appendSingle(UpdateKinds.RC_ADD, 1 + (i % 100), 1);
                }
            });
            boolean blocked = false;
            try {
                producer.start();
                for (int i = 0; i < 500 && !blocked; i++) {
                    Thread.sleep(10);
                    Thread.State st = producer.getState();
                    blocked = (st == Thread.State.WAITING || st == Thread.State.TIMED_WAITING)
                            && p.queuedUpdates() >= 100;
                }
                assertThat(blocked).as("producer blocked on full queues").isTrue();
                assertThat(producer.isAlive()).isTrue();
                assertThat(p.queuedUpdates()).isLessThan(100 + 50 + 2);
            } finally {
                chunk0.unlock();
            }
            producer.join(60_000);
            assertThat(producer.isAlive()).isFalse();
            p.commitAll();
            long sum = 0;
            for (int i = 1; i <= 100; i++) {
                sum += GmaProbe.rc(p, i);
            }
            assertThat(sum).isEqualTo(n);
        }
    }

    @Test
    void tornLogTail_incompleteGroup_isCutAndReportedMissing() throws Exception {
        try (BoscPipeline p = BoscPipeline.open(dir, settings().withAdvanceCheckpoint(false))) {
            for (int i = 1; i <= 10; i++) {
                p.appendGroup(i, op(i));
            }
            p.commitAll();
            p.abandon();
        }
        // a crash while writing group 10 (8 records of 29 bytes): cut inside it
        Path seg = UpdateLog.segmentName(dir.resolve("log"), 1);
        long len = java.nio.file.Files.size(seg);
        try (var ch = java.nio.channels.FileChannel.open(seg, java.nio.file.StandardOpenOption.WRITE)) {
            ch.truncate(len - 3 * UpdateLog.RECORD_BYTES - 7);
        }
        UpdateLog.Recovery rec = UpdateLog.recover(dir.resolve("log"), 1, 0);
        assertThat(rec.lastOpId()).isEqualTo(9);
        assertThat(rec.nextLsn()).isEqualTo(9 * 8 + 1);
        assertThat(rec.records().size()).isEqualTo(9 * 6);
        assertThat(java.nio.file.Files.size(seg)).isEqualTo(9 * 8 * UpdateLog.RECORD_BYTES);
        try (BoscPipeline p = BoscPipeline.open(dir, settings())) {
            assertThat(p.lastOpId()).isEqualTo(9);
        }
    }

    /**
     * The GC directory on a 1 MiB tmpfs (root only; skipped elsewhere): a committer whose chunk
     * write hits ENOSPC does not die. Updates keep being logged, the pipeline reports the stall,
     * and once space is back the same pipeline writes every update without a restart.
     */
    @Test
    void committer_chunkWriteHitsFullDisk_retriesAndRecoversWhenSpaceIsBack() throws Exception {
        Path mnt = java.nio.file.Files.createDirectories(dir.resolve("small"));
        boolean mounted = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=1048576", "tmpfs", mnt.toString())
                .redirectErrorStream(true).start().waitFor() == 0;
        org.junit.jupiter.api.Assumptions.assumeTrue(mounted, "needs a tmpfs mount (root) for a real ENOSPC in the GMA");
        try {
            long far = 3L * GmaFormat.PBNS_PER_CHUNK + 5; // chunk 3: its first write grows the GMA file by 128 KiB
            try (BoscPipeline p = BoscPipeline.open(mnt, settings())) {
                UpdateBatch b = new UpdateBatch();
                b.add(UpdateKinds.RC_ADD, 7, 1);
                p.appendGroup(1, b);
                p.commitAll();
                Path filler = mnt.resolve("filler");
                fill(filler, mnt, 48 * 1024);
                UpdateBatch c = new UpdateBatch();
                c.add(UpdateKinds.RC_ADD, far, 2);
                p.appendGroup(2, c);
                long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
                while (p.stalled() == null && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
                assertThat(p.stalled()).as("the committer reports the stall").isNotNull();
                assertThat(p.stalled().getMessage()).contains("No space left");
                assertThat(p.failure()).as("and is not dead").isNull();
                UpdateBatch d = new UpdateBatch();
                d.add(UpdateKinds.RC_ADD, 7, 1);
                p.appendGroup(3, d); // the log still takes updates

                java.nio.file.Files.delete(filler);
                deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
                while (p.stalled() != null && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
                assertThat(p.stalled()).as("writes again once space is back").isNull();
                p.commitAll();
                assertThat(GmaProbe.rc(p, far)).isEqualTo(2);
                assertThat(GmaProbe.rc(p, 7)).isEqualTo(2);
            }
            try (BoscPipeline p = BoscPipeline.open(mnt, settings())) {
                assertThat(GmaProbe.rc(p, far)).as("durable after a reopen").isEqualTo(2);
                assertThat(GmaProbe.rc(p, 7)).isEqualTo(2);
                assertThat(p.gma().verify()).isEqualTo(4);
            }
        } finally {
            new ProcessBuilder("umount", mnt.toString()).start().waitFor();
        }
    }

    /** Writes a file that leaves about {@code leave} bytes free on {@code mnt}'s file system. */
    private static void fill(Path file, Path mnt, long leave) throws Exception {
        long n = java.nio.file.Files.getFileStore(mnt).getUsableSpace() - leave;
        java.nio.ByteBuffer buf = java.nio.ByteBuffer.allocate(4096);
        try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.CREATE,
                java.nio.file.StandardOpenOption.WRITE)) {
            try {
                for (long w = 0; w < n; w += buf.capacity()) {
                    ch.write(buf.clear());
                }
            } catch (java.io.IOException full) {
                // the pipeline's own files grew meanwhile: give back what should stay free
                ch.truncate(Math.max(0, ch.size() - leave));
            }
        }
    }
}
