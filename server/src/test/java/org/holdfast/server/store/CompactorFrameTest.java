package org.holdfast.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.Arrays;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
import org.holdfast.common.compress.BlockCodec;
import org.holdfast.common.kill.KillPoint;
import org.holdfast.common.kill.KillPoints;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Compaction of logs holding frame records: wholly dead frames go, partly dead ones are repacked
 * with only their live members (a member map when those are not consecutive), wholly live ones
 * are copied as they are; every live member reads back byte-identical, also after a crash at
 * each compaction kill point.
 */
class CompactorFrameTest {
    private static final int BS = 4096;
    private static final int M = 8;

    @TempDir
    Path dir;

    private final TreeMap<Long, byte[]> live = new TreeMap<>();
    private final TreeSet<Long> dead = new TreeSet<>();
    private final java.util.List<Long> frames = new java.util.ArrayList<>();

    @AfterEach
    void disarm() {
        KillPoints.disarm();
    }

    private DataStore open(MetadataDb db) {
        return DataStore.open(new DataStore.Settings(dir.resolve("data"), 1L << 16, FsyncPolicy.COMMIT, 64, 0), db);
    }

    private static byte[] block(Random r) {
        byte[] b = new byte[BS];
        r.nextBytes(b);
        Arrays.fill(b, 1500, BS, (byte) r.nextInt(4)); // about 1.5 KiB compressed: a few frames per 64 KiB log
        return b;
    }

    /**
     * 24 frames of 8 members and a block record after every third, in 64 KiB logs; frame f keeps:
     * f % 4 == 0 all members, 1 none, 2 members 0, 3, 4 and 7 (a map), 3 members 0..2 (consecutive).
     */
    private void fill() throws Exception {
        Random r = new Random(11);
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog")); DataStore store = open(db); BlockCodec codec = new BlockCodec()) {
            for (int f = 0; f < 24; f++) {
                byte[] raw = new byte[M * BS];
                byte[] fps = new byte[M * 32];
                for (int k = 0; k < M; k++) {
                    System.arraycopy(block(r), 0, raw, k * BS, BS);
                    System.arraycopy(MessageDigest.getInstance("SHA-256").digest(Arrays.copyOfRange(raw, k * BS, (k + 1) * BS)), 0,
                            fps, k * 32, 32);
                }
                byte[] z = new byte[raw.length + 4096];
                int n = codec.compress(raw, 0, raw.length, z, 0);
                long first = store.appendFrame(fps, 0, M, z, 0, n, BS);
                frames.add(first);
                for (int k = 0; k < M; k++) {
                    boolean keep = switch (f % 4) {
                        case 0 -> true;
                        case 1 -> false;
                        case 2 -> k == 0 || k == 3 || k == 4 || k == 7;
                        default -> k < 3;
                    };
                    if (keep) {
                        live.put(first + k, Arrays.copyOfRange(raw, k * BS, (k + 1) * BS));
                    } else {
                        dead.add(first + k);
                    }
                }
                if (f % 3 == 0) {
                    byte[] b = block(r);
                    long p = store.append(MessageDigest.getInstance("SHA-256").digest(b), 0, b, 0, BS, FormatVersions.CODEC_RAW, BS);
                    live.put(p, b);
                }
            }
            store.sync();
            try (MetadataBatch b = new MetadataBatch()) {
                for (long p : dead) {
                    store.locations().delete(b, p);
                }
                db.write(b, true);
            }
        }
    }

    private void assertLiveReadable() {
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog")); DataStore store = open(db); BlockCodec codec = new BlockCodec()) {
            StoredBlock b = new StoredBlock();
            for (Map.Entry<Long, byte[]> e : live.entrySet()) {
                store.read(e.getKey(), b);
                assertThat(Arrays.copyOfRange(b.data(), b.dataOffset(), b.dataOffset() + b.storedLength())).as("pbn %d", e.getKey())
                        .isEqualTo(e.getValue());
            }
            long[] pbns = live.descendingKeySet().stream().mapToLong(Long::longValue).toArray();
            BlockBatch batch = new BlockBatch(32, 1 << 20, BS);
            byte[] out = new byte[BS];
            for (int done = 0; done < pbns.length; ) {
                int n = store.readBatch(pbns, done, pbns.length - done, batch);
                for (int i = 0; i < n; i++) {
                    batch.decode(i, codec, out, 0);
                    assertThat(out).as("batch pbn %d", pbns[done + i]).isEqualTo(live.get(pbns[done + i]));
                }
                done += n;
            }
            for (long p : dead) {
                assertThat(store.fingerprint(p, new StoredBlock(1))).isFalse();
            }
        }
    }

    private long dataBytes() throws Exception {
        try (var s = Files.list(dir.resolve("data"))) {
            return s.mapToLong(p -> p.toFile().length()).sum();
        }
    }

    /** Members of the frame record each live frame member lies in, by PBN. */
    private Map<Long, Integer> frameMembers() {
        Map<Long, Integer> out = new TreeMap<>();
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            new LocationIndex(db).forEachLocation((pbn, logId, offset, location, fps, fpOff) -> {
                out.put(pbn, FrameFormat.members(location));
                return true;
            });
        }
        return out;
    }

    @Test
    void compact_partlyDeadFramesRepackedDeadDroppedLiveCopied_everyLiveMemberReadsBack() throws Exception {
        fill();
        long before = dataBytes();
        Compactor.Result r;
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            r = Compactor.compact(dir.resolve("data"), db, 1.0);
        }
        assertThat(r.logsRewritten() + r.logsDeleted()).isPositive();
        assertThat(r.logsSkippedCorrupt()).isZero();
        assertThat(dataBytes()).as("dead members' bytes are gone").isLessThan(before * 3 / 4);
        Map<Long, Integer> members = frameMembers();
        int repackedWithMap = 0;
        int repackedConsecutive = 0;
        int whole = 0;
        for (Map.Entry<Long, Integer> e : members.entrySet()) {
            switch (e.getValue()) {
                case 4 -> repackedWithMap++;
                case 3 -> repackedConsecutive++;
                case 8 -> whole++;
                case 1 -> { } // block records
                default -> throw new AssertionError("pbn " + e.getKey() + " lies in a frame of " + e.getValue() + " members");
            }
        }
        // the active log is not compacted: frames there keep their dead members
        assertThat(repackedWithMap).as("frames keeping 4 of 8 members").isGreaterThanOrEqualTo(4 * 4);
        assertThat(repackedConsecutive).as("frames keeping their first 3 members").isGreaterThanOrEqualTo(3 * 4);
        assertThat(whole).isGreaterThanOrEqualTo(8 * 4);
        assertLiveReadable();

        // a repacked frame with a map can lose more members and be repacked again
        long mapped = members.entrySet().stream().filter(e -> e.getValue() == 4).findFirst().orElseThrow().getKey();
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            try (MetadataBatch b = new MetadataBatch()) {
                new LocationIndex(db).delete(b, mapped);
                db.write(b, true);
            }
            live.remove(mapped);
            dead.add(mapped);
            Compactor.compact(dir.resolve("data"), db, 1.0);
        }
        assertThat(frameMembers().get(mapped + 3)).isEqualTo(3);
        assertLiveReadable();
    }

    @Test
    void onlineCompaction_aReaderCachingADroppedFrame_readsTheFrameNowAtItsOffset() throws Exception {
        Random r = new Random(3);
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog")); DataStore store = open(db); BlockCodec codec = new BlockCodec()) {
            long[] firsts = new long[2];
            byte[][] raws = new byte[2][];
            for (int f = 0; f < 2; f++) {
                raws[f] = new byte[M * BS];
                byte[] fps = new byte[M * 32];
                for (int k = 0; k < M; k++) {
                    System.arraycopy(block(r), 0, raws[f], k * BS, BS);
                    System.arraycopy(MessageDigest.getInstance("SHA-256").digest(Arrays.copyOfRange(raws[f], k * BS, (k + 1) * BS)), 0,
                            fps, k * 32, 32);
                }
                byte[] z = new byte[raws[f].length + 4096];
                int n = codec.compress(raws[f], 0, raws[f].length, z, 0);
                firsts[f] = store.appendFrame(fps, 0, M, z, 0, n, BS);
            }
            store.sync();
            while (store.compactableBelow() < 2) { // seal log 1: fill log 2 and make it durable
                byte[] b = block(r);
                store.append(MessageDigest.getInstance("SHA-256").digest(b), 0, b, 0, BS, FormatVersions.CODEC_RAW, BS);
                store.sync();
            }
            StoredBlock reader = new StoredBlock();
            store.read(firsts[0] + 2, reader); // caches frame 0, the first record of log 1
            long[] gone = new long[M];
            for (int k = 0; k < M; k++) {
                gone[k] = firsts[0] + k;
            }
            store.forget(gone, M);
            Compactor.Result res = new Compactor(store).run(1.0, Long.MAX_VALUE);
            assertThat(res.logsRewritten()).isEqualTo(1);
            store.read(firsts[1] + 5, reader); // frame 1 now lies where frame 0 lay
            assertThat(Arrays.copyOfRange(reader.data(), reader.dataOffset(), reader.dataOffset() + BS))
                    .isEqualTo(Arrays.copyOfRange(raws[1], 5 * BS, 6 * BS));
            assertThat(store.badBlocks().count()).isZero();
        }
    }

    @Test
    void onlineCompaction_sweepFreesRepackedMembersBeforeTheSwitch_theyNeverGetALocationBack() throws Exception {
        fill();
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog")); DataStore store = open(db)) {
            // the first frame keeping 4 of 8 members (frame 2): free two of those after the copy
            long first = frames.get(2);
            long[] freed = {first, first + 3};
            Compactor c = new Compactor(store);
            c.beforeSwitch = id -> {
                if (id == 1) {
                    store.forget(freed, 2);
                }
            };
            Compactor.Result r = c.run(1.0, Long.MAX_VALUE);
            assertThat(r.recordsFreedMeanwhile()).isEqualTo(2);
            for (long p : freed) {
                assertThat(store.fingerprint(p, new StoredBlock(1))).as("pbn %d", p).isFalse();
                live.remove(p);
                dead.add(p);
            }
        }
        assertLiveReadable();
    }

    @Test
    void crash_atEachCompactionKillPoint_everyLiveMemberReadsBack() throws Exception {
        fill();
        for (KillPoint p : new KillPoint[] {KillPoints.COMPACTION_AFTER_COPY, KillPoints.COMPACTION_AFTER_SWITCH}) {
            KillPoints.arm(p, 1, KillPoints.Mode.THROW);
            try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
                assertThatThrownBy(() -> Compactor.compact(dir.resolve("data"), db, 1.0)).isInstanceOf(KillPoints.Killed.class);
            }
            KillPoints.disarm();
            assertLiveReadable(); // the store's open finishes or discards what the crash left
        }
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            Compactor.compact(dir.resolve("data"), db, 1.0);
            assertThat(db.metaLong(Compactor.META_INTENT, -1)).isEqualTo(-1);
        }
        assertLiveReadable();
    }

    /**
     * The dead-tail cut tried against frames and readers: in every sealed log the live records after the
     * last partly live frame are freed, so each log's live part ends inside a frame whose other members
     * are dead. The byte bound (1 byte) rewrites one log and defers the rest, which are cut, while a
     * reader reads every live member over and over. The cut never takes a byte of a live frame: every
     * live member reads back, by one read and by batches, after a reopen too, and nothing is marked bad.
     */
    @Test
    void byteBoundDefersLogs_deadTailsCutAtAPartlyLiveFrame_whileAReaderReads_everyLiveMemberReadsBack() throws Exception {
        fill();
        Map<Integer, Long> cutAt = new TreeMap<>(); // log id -> end of its last partly live frame, where the cut must land
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog")); DataStore store = open(db)) {
            int below = store.compactableBelow();
            Map<Integer, TreeMap<Long, long[]>> records = new TreeMap<>(); // log -> offset -> {end, live members, members}
            Map<Integer, java.util.List<Long>> pbnsAt = new TreeMap<>();
            store.locations().forEachLocation((pbn, logId, offset, location, fps, fpOff) -> {
                if (logId < below) {
                    long[] rec = records.computeIfAbsent(logId, k -> new TreeMap<>()).computeIfAbsent(offset,
                            k -> new long[] {offset + FormatVersions.RECORD_HEADER_BYTES + FrameFormat.recordStored(location), 0,
                                    FrameFormat.members(location)});
                    rec[1]++;
                }
                return true;
            });
            java.util.List<Long> tail = new java.util.ArrayList<>();
            for (Map.Entry<Integer, TreeMap<Long, long[]>> log : records.entrySet()) {
                Long partial = null;
                for (Map.Entry<Long, long[]> rec : log.getValue().entrySet()) {
                    if (rec.getValue()[1] < rec.getValue()[2]) {
                        partial = rec.getKey();
                    }
                }
                if (partial == null || log.getValue().higherKey(partial) == null) {
                    continue;
                }
                cutAt.put(log.getKey(), log.getValue().get(partial)[0]);
                long after = partial;
                store.locations().forEachLocation((pbn, logId, offset, location, fps, fpOff) -> {
                    if (logId == log.getKey() && offset > after) {
                        tail.add(pbn);
                    }
                    return true;
                });
            }
            assertThat(cutAt).as("sealed logs whose live part ends in a partly live frame").hasSizeGreaterThanOrEqualTo(2);
            store.forget(tail.stream().mapToLong(Long::longValue).toArray(), tail.size());
            for (long p : tail) {
                live.remove(p);
                dead.add(p);
            }
            Map<Long, byte[]> expected = new TreeMap<>(live);
            Map<Long, Long> offsets = new java.util.HashMap<>();
            store.locations().forEachLocation((pbn, logId, offset, location, fps, fpOff) -> {
                offsets.put(pbn, offset);
                return true;
            });
            java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
            java.util.concurrent.atomic.AtomicReference<Throwable> failed = new java.util.concurrent.atomic.AtomicReference<>();
            int[] rounds = {0};
            Thread reader = new Thread(() -> {
                StoredBlock b = new StoredBlock();
                try {
                    while (!stop.get() || rounds[0] < 2) {
                        for (Map.Entry<Long, byte[]> e : expected.entrySet()) {
                            store.read(e.getKey(), b);
                            if (!Arrays.equals(b.data(), b.dataOffset(), b.dataOffset() + b.storedLength(), e.getValue(), 0, BS)) {
                                throw new AssertionError("pbn " + e.getKey() + " read other bytes");
                            }
                        }
                        rounds[0]++;
                    }
                } catch (Throwable t) {
                    failed.set(t);
                }
            }, "trim-reader");
            reader.start();
            Compactor.Result r;
            try {
                r = new Compactor(store).run(1.0, 1);
            } finally {
                stop.set(true);
                reader.join(60_000);
            }
            assertThat(failed.get()).as("the reader during the cuts").isNull();
            assertThat(r.logsRewritten()).as("%s", r).isEqualTo(1);
            assertThat(r.logsTrimmed()).as("%s", r).isGreaterThanOrEqualTo(1);
            java.util.Set<Integer> rewritten = new java.util.TreeSet<>(); // its records moved: no cut to check there
            store.locations().forEachLocation((pbn, logId, offset, location, fps, fpOff) -> {
                Long was = offsets.get(pbn);
                if (was != null && was != offset) {
                    rewritten.add(logId);
                }
                return true;
            });
            assertThat(rewritten).hasSize(1);
            cutAt.keySet().removeAll(rewritten);
            int cut = 0;
            for (Map.Entry<Integer, Long> e : cutAt.entrySet()) {
                long size = Files.size(store.logPath(e.getKey()));
                if (size < e.getValue()) {
                    throw new AssertionError("log " + e.getKey() + " was cut to " + size + " bytes, inside its last live frame ending at "
                            + e.getValue());
                }
                cut += size == e.getValue() ? 1 : 0;
            }
            assertThat(cut).as("logs cut right after their partly live frame").isPositive();
            assertThat(store.badBlocks().count()).isZero();
        }
        assertLiveReadable();
    }

    @Test
    void crash_afterLocationBatchBeforeRename_repackedFramesServedAfterRestart() throws Exception {
        fill();
        Path data = dir.resolve("data");
        long oldSize;
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            oldSize = CompactionCrashStates.afterLocationBatchBeforeRename(data, db, 1.0);
        }
        assertLiveReadable(); // the store's open renames the compacted file into place
        assertThat(Files.size(data.resolve(DataLog.fileName(1)))).isLessThan(oldSize);
        assertThat(Files.exists(data.resolve(DataLog.fileName(1) + ".compact"))).isFalse();
    }
}
