package org.holdfast.server.gc;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.util.Random;
import org.holdfast.common.id.Fingerprint;
import org.holdfast.common.id.VolumeId;
import org.holdfast.gc.bosc.BoscSettings;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.SessionMap;
import org.holdfast.server.catalog.SnapshotCommit;
import org.holdfast.server.engine.ExactFingerprintIndex;
import org.holdfast.server.store.Compactor;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.FsyncPolicy;
import org.holdfast.server.store.MetadataDb;

/**
 * Measures how long a sweep and a compaction take per GiB reclaimed, on a real store: one volume
 * keeps {@code keepPercent} % of the blocks, another holds the rest and is deleted by the operator;
 * then a GC cycle (sweep, compaction off) and an online compaction (the store open, as in a GC run,
 * optionally while a reader thread reads kept blocks), each timed in wall-clock and process CPU
 * seconds. Not a test (no assertion on speed); run it by hand, see docs/benchmarks.md "Garbage collection".
 *
 * <p>Arguments: [GiB of 4 KiB blocks, default 1] [keep percent, default 10]
 * [contiguous | interleaved, default contiguous] [directory, default a temp dir] [readers, default 0].
 */
public final class GcReclaimBenchmark {
    private static final int BS = 4096;

    private GcReclaimBenchmark() {
    }

    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    public static void main(String[] args) throws Exception {
        double gib = args.length > 0 ? Double.parseDouble(args[0]) : 1.0;
        int keepPercent = args.length > 1 ? Integer.parseInt(args[1]) : 10;
        boolean interleaved = args.length > 2 && args[2].equals("interleaved");
        Path dir = args.length > 3 && !args[3].equals("-") ? Path.of(args[3]) : Files.createTempDirectory("holdfast-gc-bench");
        int readers = args.length > 4 ? Integer.parseInt(args[4]) : 0;
        long blocks = (long) (gib * (1L << 30) / BS);
        long keep = blocks * keepPercent / 100;
        long drop = blocks - keep;
        MetadataDb db = MetadataDb.open(dir.resolve("catalog"));
        DataStore store = DataStore.open(new DataStore.Settings(dir.resolve("data"), 256L << 20, FsyncPolicy.COMMIT, 1 << 16, 0), db);
        ExactFingerprintIndex index = new ExactFingerprintIndex(db);
        Catalog catalog = new Catalog(db);
        Object[] monitor = new Object[1];
        Clock clock = Clock.systemUTC();
        // compaction off in the cycle: it is timed on its own below
        GcService gc = GcService.open(new GcService.Settings(dir.resolve("gc"), BoscSettings.defaults(), Duration.ofHours(24), "30d", 64,
                0, Long.MAX_VALUE), catalog, store, index, clock, () -> monitor[0]);
        SnapshotCommit commit = new SnapshotCommit(catalog, new GcCommitHook(gc), clock);
        monitor[0] = commit;

        long t0 = System.nanoTime();
        byte[] payload = new byte[BS];
        new Random(1).nextBytes(payload);
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        byte[] fp = new byte[Fingerprint.BYTES];
        SessionMap kept = new SessionMap((int) keep);
        SessionMap dropped = new SessionMap((int) drop);
        long keptLbn = 0;
        long droppedLbn = 0;
        for (long i = 0; i < blocks; i++) {
            for (int b = 0; b < 8; b++) {
                payload[b] = (byte) (i >>> (8 * b)); // every block unique
            }
            sha.update(payload, 0, BS);
            sha.digest(fp, 0, Fingerprint.BYTES);
            long pbn = store.append(fp, 0, payload, 0, BS, FormatVersions.CODEC_RAW, BS);
            // contiguous: kept blocks first (whole logs die); interleaved: every log keeps keepPercent %
            boolean isKept = interleaved ? i % 100 < keepPercent : i < keep;
            if (isKept && keptLbn < keep) {
                kept.add(keptLbn++, pbn);
            } else {
                dropped.add(droppedLbn++, pbn);
            }
        }
        store.sync();
        commit.commit(new SnapshotCommit.Request(new VolumeId("kept"), BS, keptLbn * BS, 0, kept, keptLbn * BS, keptLbn, keptLbn, 0));
        commit.commit(new SnapshotCommit.Request(new VolumeId("dropped"), BS, droppedLbn * BS, 0, dropped, droppedLbn * BS,
                droppedLbn, droppedLbn, 0));
        double build = (System.nanoTime() - t0) / 1e9;
        gc.pipeline().awaitDurable();

        long t1 = System.nanoTime();
        GcService.VolumeDeletion d = gc.deleteVolume(new VolumeId("dropped"), VolumeGate.NONE);
        double delete = (System.nanoTime() - t1) / 1e9;

        long t2 = System.nanoTime();
        GcService.CycleReport r = gc.runCycle(clock.millis() + 1000);
        double sweep = (System.nanoTime() - t2) / 1e9;
        long t2b = System.nanoTime();
        GcService.CycleReport idle = gc.runCycle(clock.millis() + 2000);
        double idleSweep = (System.nanoTime() - t2b) / 1e9;
        long[] keptPbns = new long[(int) keptLbn];
        try (org.holdfast.server.catalog.SessionMap.Cursor c = kept.cursor()) {
            for (int i = 0; c.next(); i++) {
                keptPbns[i] = c.pbn();
            }
        }
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.atomic.AtomicLong reads = new java.util.concurrent.atomic.AtomicLong();
        java.util.List<Thread> readerThreads = new java.util.ArrayList<>();
        for (int t = 0; t < readers; t++) {
            Thread th = new Thread(() -> {
                java.util.Random rr = new java.util.Random();
                org.holdfast.server.store.StoredBlock b = new org.holdfast.server.store.StoredBlock();
                while (!stop.get()) {
                    store.read(keptPbns[rr.nextInt(keptPbns.length)], b);
                    reads.incrementAndGet();
                }
            });
            th.start();
            readerThreads.add(th);
        }
        long cpu0 = processCpuNanos();
        long t3 = System.nanoTime();
        Compactor.Result c = new Compactor(store).run(Compactor.DEFAULT_THRESHOLD, Long.MAX_VALUE);
        double compact = (System.nanoTime() - t3) / 1e9;
        double compactCpu = (processCpuNanos() - cpu0) / 1e9;
        stop.set(true);
        for (Thread th : readerThreads) {
            th.join();
        }
        gc.close();
        index.close();
        store.close();
        db.close();

        double freedGib = r.sweep().freed() * (double) BS / (1L << 30);
        double reclaimedGib = (c.bytesBefore() - c.bytesAfter()) / (double) (1L << 30);
        System.out.printf("store: %.2f GiB of %d-byte blocks (%d blocks), kept %d %% (%s), built in %.1f s%n", gib, BS, blocks, keepPercent,
                interleaved ? "interleaved" : "contiguous", build);
        System.out.printf("volume deletion: %d blocks released, %d map entries, %.2f s%n", d.blocksReleased(), d.mapEntriesDeleted(), delete);
        System.out.printf("sweep: %d blocks freed (%.3f GiB) in %.2f s = %.2f s/GiB freed%n", r.sweep().freed(), freedGib, sweep, sweep / freedGib);
        System.out.printf("sweep: the first run read %d GMA chunks; a second run with nothing changed read %d chunks in %.3f s%n",
                r.sweep().chunksScanned(), idle.sweep().chunksScanned(), idleSweep);
        System.out.printf("online compaction: %d logs examined, %d rewritten, %d deleted, %.3f GiB copied, %.3f GiB reclaimed"
                + " in %.2f s (%.2f s CPU, whole process) = %.2f s/GiB reclaimed (%.2f CPU s/GiB); %d reader threads did %d reads meanwhile%n",
                c.logsExamined(), c.logsRewritten(), c.logsDeleted(), c.bytesCopied() / (double) (1L << 30), reclaimedGib, compact,
                compactCpu, compact / reclaimedGib, compactCpu / reclaimedGib, readers, reads.get());
        System.out.printf("load average at the end: %s%n", Files.readString(Path.of("/proc/loadavg")).trim());
    }
}
