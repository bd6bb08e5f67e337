package org.holdfast.server.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.holdfast.common.id.Fingerprint;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Online compaction over a real RocksDB: readers, dedup lookups, appends and frees run in threads
 * while compaction moves the blocks they use; nothing reads wrong, nothing freed comes back, nothing
 * live is lost, before and after a reopen.
 */
class OnlineCompactionTest {
    private static final int BS = 4096;

    @TempDir
    Path dir;

    /** PBN → seed of its payload; the payload and fingerprint are derived from the seed. */
    private final Map<Long, Long> seeds = new ConcurrentHashMap<>();

    private DataStore open(MetadataDb db) {
        return DataStore.open(new DataStore.Settings(dir.resolve("data"), 1L << 16, FsyncPolicy.COMMIT, 64, 0), db);
    }

    private static byte[] payload(long seed) {
        byte[] p = new byte[BS];
        new Random(seed).nextBytes(p);
        return p;
    }

    private static byte[] fingerprint(long seed) {
        byte[] f = new byte[Fingerprint.BYTES];
        new Random(~seed).nextBytes(f);
        return f;
    }

    private long append(DataStore store, long seed) {
        long pbn = store.append(fingerprint(seed), 0, payload(seed), 0, BS, FormatVersions.CODEC_RAW, BS);
        seeds.put(pbn, seed);
        return pbn;
    }

    private void assertReads(DataStore store, long pbn, StoredBlock b) {
        store.read(pbn, b);
        assertThat(Arrays.copyOfRange(b.data(), b.dataOffset(), b.dataOffset() + b.storedLength()))
                .as("pbn %d", pbn).isEqualTo(payload(seeds.get(pbn)));
        assertThat(b.fingerprint()).isEqualTo(fingerprint(seeds.get(pbn)));
    }

    private void assertState(DataStore store, Set<Long> live, Set<Long> freed) {
        StoredBlock b = new StoredBlock();
        for (long p : live) {
            assertReads(store, p, b);
        }
        for (long p : freed) {
            assertThat(store.fingerprint(p, b)).as("freed pbn %d has a location again", p).isFalse();
        }
    }

    @Test
    void readersDedupAppendsAndFrees_duringCompactions_alwaysCorrectBytesNoFreedBlockBackNoLiveLost() throws Exception {
        Set<Long> live = ConcurrentHashMap.newKeySet();
        Set<Long> freed = ConcurrentHashMap.newKeySet();
        List<Long> stable = new ArrayList<>(); // never freed: the readers' blocks
        List<Long> doomed = new CopyOnWriteArrayList<>();
        Random r = new Random(11);
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog")); DataStore store = open(db)) {
            for (int i = 0; i < 1500; i++) {
                long pbn = append(store, r.nextLong());
                live.add(pbn);
                (i % 3 == 0 ? stable : doomed).add(pbn);
            }
            store.sync();
            // half the doomed go at once: most logs fall to about half live
            List<Long> first = new ArrayList<>(doomed.subList(0, doomed.size() / 2));
            forget(store, first, live, freed);
            doomed.removeAll(first);

            AtomicBoolean stop = new AtomicBoolean();
            List<Throwable> errors = new CopyOnWriteArrayList<>();
            AtomicLong reads = new AtomicLong();
            AtomicLong batchReads = new AtomicLong();
            AtomicLong lookups = new AtomicLong();
            long[] stableArr = stable.stream().mapToLong(Long::longValue).sorted().toArray();
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                int seed = t;
                threads.add(new Thread(() -> {
                    Random tr = new Random(seed);
                    StoredBlock b = new StoredBlock();
                    BlockBatch batch = new BlockBatch(16, 16 * (BS + FormatVersions.RECORD_HEADER_BYTES), FormatVersions.MAX_STORED_BYTES);
                    long[] run = new long[16];
                    byte[] fps = new byte[16 * Fingerprint.BYTES];
                    boolean[] found = new boolean[16];
                    boolean[] scratch = new boolean[16];
                    try {
                        while (!stop.get()) {
                            long p = stableArr[tr.nextInt(stableArr.length)];
                            assertReads(store, p, b);
                            reads.incrementAndGet();
                            int start = tr.nextInt(stableArr.length - 16);
                            System.arraycopy(stableArr, start, run, 0, 16);
                            int n = store.readBatch(run, 0, 16, batch);
                            for (int i = 0; i < n; i++) {
                                assertThat(batch.pbn(i)).isEqualTo(run[i]);
                                assertThat(Arrays.copyOfRange(batch.data(), batch.dataOffset(i), batch.dataOffset(i) + batch.storedLength(i)))
                                        .as("batch pbn %d", run[i]).isEqualTo(payload(seeds.get(run[i])));
                            }
                            batchReads.incrementAndGet();
                            store.fingerprints(run, 16, fps, found, scratch); // the dedup engine's lookup
                            for (int i = 0; i < 16; i++) {
                                assertThat(found[i]).isTrue();
                                assertThat(Arrays.copyOfRange(fps, i * 32, i * 32 + 32)).isEqualTo(fingerprint(seeds.get(run[i])));
                            }
                            lookups.incrementAndGet();
                        }
                    } catch (Throwable e) {
                        errors.add(e);
                    }
                }, "reader-" + t));
            }
            threads.add(new Thread(() -> { // a backup: appends, syncs, and the logs roll
                Random tr = new Random(99);
                try {
                    for (int i = 0; !stop.get() && i < 3000; i++) {
                        long pbn = append(store, tr.nextLong());
                        if (i % 8 == 7) {
                            store.sync();
                            live.addAll(seeds.keySet().stream().filter(p -> !freed.contains(p)).toList());
                        }
                        if (i % 2 == 0) {
                            doomed.add(pbn);
                        }
                    }
                } catch (Throwable e) {
                    errors.add(e);
                }
            }, "appender"));
            threads.add(new Thread(() -> { // the sweep: frees doomed blocks a few at a time
                Random tr = new Random(5);
                try {
                    while (!stop.get()) {
                        List<Long> some = new ArrayList<>();
                        for (int i = 0; i < 4 && !doomed.isEmpty(); i++) {
                            long p = doomed.remove(tr.nextInt(doomed.size()));
                            if (live.contains(p)) { // only synced blocks can be freed
                                some.add(p);
                            } else {
                                doomed.add(p);
                            }
                        }
                        forget(store, some, live, freed);
                        Thread.sleep(1);
                    }
                } catch (Throwable e) {
                    errors.add(e);
                }
            }, "sweeper"));
            threads.forEach(Thread::start);
            Compactor compactor = new Compactor(store);
            long rewritten = 0;
            long moved = 0;
            long freedMeanwhile = 0;
            long deadline = System.nanoTime() + 4_000_000_000L;
            int rounds = 0;
            while ((System.nanoTime() < deadline || rewritten < 20) && errors.isEmpty() && rounds < 500) {
                Compactor.Result c = compactor.run(0.9, Long.MAX_VALUE);
                rewritten += c.logsRewritten();
                moved += c.recordsMoved();
                freedMeanwhile += c.recordsFreedMeanwhile();
                rounds++;
            }
            stop.set(true);
            for (Thread t : threads) {
                t.join(30_000);
            }
            assertThat(errors).isEmpty();
            System.out.printf("[online compaction] %d rounds, %d logs rewritten, %d records moved, %d freed between copy and switch;"
                    + " %d reads, %d batch reads, %d lookups%n", rounds, rewritten, moved, freedMeanwhile, reads.get(), batchReads.get(),
                    lookups.get());
            assertThat(rewritten).isGreaterThanOrEqualTo(20);
            assertThat(reads.get()).isPositive();
            assertThat(batchReads.get()).isPositive();
            store.sync();
            live.removeAll(freed);
            live.addAll(seeds.keySet().stream().filter(p -> !freed.contains(p)).toList());
            assertState(store, live, freed);
        }
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog")); DataStore store = open(db)) {
            assertState(store, live, freed);
        }
    }

    @Test
    void sweepFreesBlocksBetweenCopyAndSwitch_theyStayFreedAndTheOthersMove() throws Exception {
        Set<Long> live = ConcurrentHashMap.newKeySet();
        Set<Long> freed = ConcurrentHashMap.newKeySet();
        List<Long> all = new ArrayList<>();
        Random r = new Random(3);
        Compactor.Result c;
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog")); DataStore store = open(db)) {
            for (int i = 0; i < 300; i++) {
                long pbn = append(store, r.nextLong());
                live.add(pbn);
                all.add(pbn);
            }
            store.sync();
            List<Long> dead = new ArrayList<>();
            for (int i = 0; i < all.size(); i++) {
                if (i % 4 != 0) {
                    dead.add(all.get(i));
                }
            }
            forget(store, dead, live, freed);
            long before = dataBytes();
            Compactor compactor = new Compactor(store);
            List<Long> late = new ArrayList<>();
            compactor.beforeSwitch = id -> {
                // the sweep frees one of the copied blocks of every log after its copy was written
                List<Long> some = new ArrayList<>();
                store.locations().forEach((pbn, logId, offset, len, fps, fpOff) -> {
                    if (logId == id) {
                        some.add(pbn);
                        return false;
                    }
                    return true;
                });
                assertThat(some).hasSize(1);
                late.addAll(some);
                forget(store, some, live, freed);
            };
            c = compactor.run(Compactor.DEFAULT_THRESHOLD, Long.MAX_VALUE);
            assertThat(c.logsRewritten()).isPositive();
            assertThat(c.recordsFreedMeanwhile()).isEqualTo(late.size()).isEqualTo(c.logsRewritten());
            assertThat(dataBytes()).isLessThan(before / 2);
            assertState(store, live, freed);
        }
        assertThat(Files.exists(dir.resolve("data").resolve(DataLog.fileName(1) + ".compact"))).isFalse();
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog")); DataStore store = open(db)) {
            assertThat(db.metaLong(Compactor.META_INTENT, -1)).isEqualTo(-1);
            assertState(store, live, freed);
        }
    }

    @Test
    void boundOnBytesCopied_oneLogThisRun_restDeferredToTheNext() throws Exception {
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog")); DataStore store = open(db)) {
            Set<Long> live = ConcurrentHashMap.newKeySet();
            Set<Long> freed = ConcurrentHashMap.newKeySet();
            List<Long> dead = new ArrayList<>();
            Random r = new Random(4);
            for (int i = 0; i < 300; i++) {
                long pbn = append(store, r.nextLong());
                live.add(pbn);
                if (i % 3 != 0) {
                    dead.add(pbn);
                }
            }
            store.sync();
            forget(store, dead, live, freed);
            Compactor.Result c = new Compactor(store).run(Compactor.DEFAULT_THRESHOLD, 1);
            assertThat(c.logsRewritten()).isEqualTo(1);
            assertThat(c.logsDeferred()).isPositive();
            Compactor.Result rest = new Compactor(store).run(Compactor.DEFAULT_THRESHOLD, Long.MAX_VALUE);
            assertThat(rest.logsRewritten()).isEqualTo(c.logsDeferred());
            assertThat(rest.logsDeferred()).isZero();
            assertState(store, live, freed);
        }
    }

    @Test
    void activeAndUnindexedLogs_neverCompacted() throws Exception {
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog")); DataStore store = open(db)) {
            Set<Long> live = ConcurrentHashMap.newKeySet();
            Set<Long> freed = ConcurrentHashMap.newKeySet();
            Random r = new Random(5);
            List<Long> synced = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                synced.add(append(store, r.nextLong()));
            }
            store.sync();
            int durable = store.compactableBelow();
            assertThat(durable).isGreaterThan(1);
            forget(store, synced, live, freed); // every synced block is dead
            List<Long> unsynced = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                unsynced.add(append(store, r.nextLong())); // the logs roll, but nothing is indexed yet
            }
            Compactor.Result c = new Compactor(store).run(1.0, Long.MAX_VALUE);
            assertThat(c.logsExamined()).isEqualTo(durable - 1);
            assertThat(c.logsDeleted()).isEqualTo(durable - 1);
            for (int id = durable; id <= store.stats().activeLogId(); id++) {
                assertThat(Files.exists(dir.resolve("data").resolve(DataLog.fileName(id)))).as("log %d", id).isTrue();
            }
            store.sync();
            live.addAll(unsynced);
            assertState(store, live, freed);
        }
    }

    private static void forget(DataStore store, List<Long> pbns, Set<Long> live, Set<Long> freed) {
        long[] a = pbns.stream().mapToLong(Long::longValue).toArray();
        // recorded as freed before the delete: a reader never expects a block that may be gone
        freed.addAll(pbns);
        live.removeAll(pbns);
        store.forget(a, a.length);
    }

    private long dataBytes() throws Exception {
        try (var s = Files.list(dir.resolve("data"))) {
            return s.mapToLong(p -> p.toFile().length()).sum();
        }
    }
}
