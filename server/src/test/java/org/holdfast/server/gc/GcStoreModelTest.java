package org.holdfast.server.gc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.holdfast.common.compress.BlockCodec;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.gc.check.FsckReport;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.CommittedSnapshot;
import org.holdfast.server.catalog.MapCursor;
import org.holdfast.server.catalog.SessionMap;
import org.holdfast.server.catalog.SnapshotCommit;
import org.holdfast.server.catalog.SnapshotRecord;
import org.holdfast.server.engine.FingerprintIndex;
import org.holdfast.server.store.BlockBatch;
import org.holdfast.server.store.DataLog;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.LogArchive;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.StoredBlock;
import org.holdfast.server.store.object.ObjectStore;
import org.holdfast.server.store.object.S3ObjectStore;
import org.holdfast.server.store.object.S3ProxyFixture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * Randomized model test of GC over real storage (issue #4): several volumes with mixed retention
 * policies, real zstd/raw blocks in small data logs, duplicates within and across volumes, early
 * deletions, holds, policy changes, volume deletions, GC cycles (sweep + online compaction),
 * reclaim-now (exact mark and free, sometimes cancelled) and crashes, under a simulated clock. A
 * reference model keeps every retained snapshot's content. After every step fsck finds no data loss and no bookkeeping error; after every cycle every
 * retained snapshot reads back byte-identical through the store and fsck finds no leak.
 */
class GcStoreModelTest {
    private static final int BS = 4096;
    private static final long MINUTE = 60_000L;
    private static final long HOUR = 60 * MINUTE;
    private static final long DAY = 24 * HOUR;
    private static final long GRACE = 2 * HOUR;
    private static final String S3_PREFIX = "model/";
    private static final String S3_NODE = "model";
    private static final String[] POLICIES = {
        "12h", "2d", "7d", "daily=7,weekly=2", "keep-last=2,daily=2,weekly=1,monthly=1", "keep-last=3", "keep-last=1"};

    @TempDir
    Path dir;

    private final GcServiceTest.SimClock clock = new GcServiceTest.SimClock(Instant.parse("2026-06-01T00:00:00Z").toEpochMilli());
    private MetadataDb db;
    private DataStore store;
    private FingerprintIndex index;
    private Catalog catalog;
    private GcService gc;
    private SnapshotCommit commit;
    private GcStoreFixture fixture;
    private boolean skipAfterCommit;
    private boolean open;
    private final BlockCodec codec = new BlockCodec();
    private final MessageDigest sha;

    // the reference model
    private final List<ModelVolume> volumes = new ArrayList<>();
    private final Map<Long, Long> pbnOfContent = new HashMap<>(); // our own dedup "index": content id -> PBN
    private final List<Long> contents = new ArrayList<>();
    private long nextContent = 1;

    // what happened, for the report and the coverage assertions
    private final Map<String, Integer> steps = new TreeMap<>();
    private long snapshotsCommitted;
    private long cycles;
    private long logsRewritten;
    private long logsDeleted;
    private long bytesReclaimed;
    private long blocksFreed;
    private long snapshotsExpired;
    private long restoresChecked;
    private long duplicates;
    private long reclaimedNow; // blocks freed by reclaim-now
    private long reclaimsCancelled;
    private long maxExpiry; // the latest expiry any snapshot ever had: no block may outlive it (plus grace)
    private long longestRetention; // the longest expiry - creation seen, for the report
    private final java.util.ArrayDeque<String> recent = new java.util.ArrayDeque<>(); // for the failure message

    // scratch
    private final byte[] raw = new byte[BS];
    private final byte[] expected = new byte[BS];
    private final byte[] packed = new byte[BlockCodec.maxCompressedLength(BS)];
    private final BlockBatch batch = new BlockBatch(256, 1 << 20, ProtocolLimits.maxZstdPayload(BS));

    /** One snapshot as the model knows it. */
    private static final class ModelSnapshot {
        final long sequence;
        final long createdAt;
        final long[] content; // per LBN: content id, 0 = zero block
        long minExpiry; // a lower bound of its expiry (period policies); 0 if unknown
        boolean held;

        ModelSnapshot(long sequence, long createdAt, long[] content) {
            this.sequence = sequence;
            this.createdAt = createdAt;
            this.content = content;
        }
    }

    /** One volume as the model knows it. */
    private static final class ModelVolume {
        final VolumeId id;
        int blocks;
        String policy;
        long[] current;
        final TreeMap<Long, ModelSnapshot> snapshots = new TreeMap<>();

        ModelVolume(VolumeId id) {
            this.id = id;
        }

        boolean exists() {
            return !snapshots.isEmpty();
        }

        long latest() {
            return snapshots.lastKey();
        }
    }

    GcStoreModelTest() throws NoSuchAlgorithmException {
        sha = MessageDigest.getInstance("SHA-256");
    }

    /** Delta entries per map chunk and per GC part of a commit. */
    private int partEntries = CommitParts.DEFAULT_PART_ENTRIES;

    /** Backend s3: the sealed logs are archived here; null for the local backend. */
    private S3ProxyFixture s3;

    private void open() {
        // 64 KiB logs (about 30 records each): logs seal often, so compaction rewrites and deletes real logs
        LogArchive archive = s3 == null ? null : new LogArchive(S3ObjectStore.open(s3.settings(S3_PREFIX)), S3_NODE);
        fixture = GcStoreFixture.open(dir, clock, 1L << 16, Duration.ofMillis(GRACE), 8,
                hook -> new CrashBeforeGcLogHook(hook, () -> skipAfterCommit), partEntries, archive);
        db = fixture.db;
        store = fixture.store;
        index = fixture.index;
        catalog = fixture.catalog;
        gc = fixture.gc;
        commit = fixture.commit;
        open = true;
    }

    @AfterEach
    void close() throws Exception {
        codec.close();
        if (open) {
            fixture.close();
            open = false;
        }
        if (s3 != null) {
            s3.close();
        }
    }

    private void crashAndReopen() {
        List<Path> uploaded = s3 == null ? List.of() : uploadedLogs();
        fixture.abandon();
        // backend s3: the crash takes the local copies of the uploaded logs too; reads and compaction fetch them back
        for (Path p : uploaded) {
            try {
                Files.deleteIfExists(p);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
        skipAfterCommit = false;
        open();
    }

    /** Local files of the sealed logs whose upload is confirmed. */
    private List<Path> uploadedLogs() {
        store.archive().awaitUploads(60_000);
        try (var files = Files.list(dir.resolve("data"))) {
            return files.filter(p -> {
                int id = DataLog.parseId(p.getFileName().toString());
                return id >= 0 && store.archive().isUploaded(id);
            }).toList();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** Regression (found by the model run): the first call after a restart loaded the GC state after the deletion. */
    @Test
    void deleteSnapshot_firstCallForVolumeAfterRestart_deletesPrunesAndStaysClean() {
        open();
        Random r = new Random(7);
        ModelVolume v = new ModelVolume(new VolumeId("vol-restart"));
        volumes.add(v);
        for (int i = 0; i < 3; i++) {
            backup(r, v);
            clock.millis += HOUR;
        }
        crashAndReopen(); // the volume's GC state is not loaded again until someone needs it
        long middle = v.snapshots.keySet().stream().skip(1).findFirst().orElseThrow();
        gc.deleteSnapshot(v.id, middle);
        v.snapshots.remove(middle);
        assertCatalogMatchesModel("after early deletion");
        for (ModelSnapshot s : v.snapshots.values()) {
            assertRestores(v, s, "after early deletion");
        }
        assertNoLossNoBookkeepingError("after early deletion");
        cycle();
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {1})
    void randomSteps_fsckCleanAfterEachStep_snapshotsRestoreAndNothingLeaksAfterEachCycle(long seed) throws Exception {
        run(seed, 5, 450);
    }

    /** The same with commits of more than 5 entries written in map chunks and logged in GC parts (crashes between them included). */
    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {4})
    void randomSteps_commitsInChunksAndParts_fsckCleanAfterEachStep_snapshotsRestore(long seed) throws Exception {
        partEntries = 5;
        run(seed, 5, 450);
    }

    /**
     * Backend s3 (S3Proxy): the same steps with the sealed logs archived; every crash also wipes the
     * local copies of the uploaded logs, so restores and compaction read them back from the store,
     * and compaction rewrites and deletes objects. At the end no object is left.
     */
    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {5})
    void randomSteps_archiveOnLocalLogsWipedAtEachCrash_fsckCleanSnapshotsRestoreAndNoObjectLeftAtTheEnd(long seed) throws Exception {
        s3 = S3ProxyFixture.start(dir.resolve("s3"));
        run(seed, 5, 450);
    }

    @Tag("slow")
    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {11, 12, 13, 14})
    void randomStepsLong_fsckCleanAfterEachStep_snapshotsRestoreAndNothingLeaksAfterEachCycle(long seed) throws Exception {
        run(seed, 6, 2500);
    }

    private void run(long seed, int volumeCount, int stepCount) throws Exception {
        long started = System.nanoTime();
        open();
        Random r = new Random(seed);
        for (int i = 0; i < volumeCount; i++) {
            volumes.add(new ModelVolume(new VolumeId("vol-" + i)));
        }
        for (ModelVolume v : volumes) {
            backup(r, v);
        }
        for (int step = 0; step < stepCount; step++) {
            try {
                step(r, seed, step);
            } catch (RuntimeException | AssertionError e) {
                throw new AssertionError("seed " + seed + " failed at step " + step + "; the steps before it:\n"
                        + String.join("\n", recent), e);
            }
        }
        cycle();
        finalSweep(seed);
        assertThat(logsRewritten).as("compaction rewrote sealed logs").isPositive();
        assertThat(logsDeleted).as("compaction deleted dead logs").isPositive();
        assertThat(snapshotsExpired).as("retention expired snapshots").isPositive();
        assertThat(duplicates).as("duplicates were referenced").isPositive();
        assertThat(reclaimedNow).as("reclaim-now freed blocks the expiry sweep had not yet").isPositive();
        System.out.printf("GcStoreModelTest seed %d: %d steps %s, %d snapshots committed, %d expired, %d cycles, "
                        + "%d blocks freed, compaction %d logs rewritten / %d deleted / %d bytes reclaimed, %d snapshot restores "
                        + "checked, %d duplicate references, reclaim-now %d blocks freed / %d runs cancelled, longest retention %.1f d, %.1f s%n",
                seed, stepCount, steps, snapshotsCommitted,
                snapshotsExpired, cycles, blocksFreed, logsRewritten, logsDeleted, bytesReclaimed, restoresChecked, duplicates,
                reclaimedNow, reclaimsCancelled,
                longestRetention / (double) DAY,
                (System.nanoTime() - started) / 1e9);
    }

    private void step(Random r, long seed, int step) {
        note("step " + step + " at " + Instant.ofEpochMilli(clock.millis) + ":");
        int roll = r.nextInt(100);
        String what;
        if (roll < 45) {
            what = "backup";
            backup(r, volumes.get(r.nextInt(volumes.size())));
        } else if (roll < 62) {
            what = "clock";
            advanceClock(r);
        } else if (roll < 65) {
            what = "reclaim-now";
            reclaimNow(r);
        } else if (roll < 75) {
            what = "cycle";
            cycle();
        } else if (roll < 81) {
            what = "delete-snapshot";
            deleteSnapshot(r);
        } else if (roll < 87) {
            what = "hold";
            toggleHold(r);
        } else if (roll < 92) {
            what = "policy";
            changePolicy(r);
        } else if (roll < 97) {
            what = "crash";
            crash(r);
        } else {
            what = "delete-volume";
            deleteVolume(r);
        }
        steps.merge(what, 1, Integer::sum);
        String context = "seed " + seed + " step " + step + " (" + what + ")";
        assertNoLossNoBookkeepingError(context);
        if (!what.equals("cycle") && !what.equals("reclaim-now")) {
            assertCatalogMatchesModel(context);
        }
    }

    private void note(String event) {
        if (recent.size() == 40) {
            recent.removeFirst();
        }
        recent.addLast(event);
    }

    // ------------------------------------------------------------------ steps

    private void backup(Random r, ModelVolume v) {
        boolean fresh = !v.exists();
        if (fresh) {
            v.blocks = 24 + r.nextInt(41);
            v.current = new long[v.blocks];
        }
        TreeMap<Long, Long> delta = new TreeMap<>(); // LBN -> content id
        if (fresh) {
            for (int l = 0; l < v.blocks; l++) {
                delta.put((long) l, r.nextInt(10) == 0 ? 0L : pickContent(r, v));
            }
        } else {
            int n = 1 + r.nextInt(12);
            for (int i = 0; i < n; i++) {
                delta.put((long) r.nextInt(v.blocks), r.nextInt(12) == 0 ? 0L : pickContent(r, v));
            }
        }
        SessionMap m = new SessionMap(delta.size());
        long[] next = v.current.clone();
        long stored = 0;
        long newBlocks = 0;
        for (Map.Entry<Long, Long> e : delta.entrySet()) {
            long content = e.getValue();
            long pbn = 0;
            if (content != 0) {
                Long known = pbnOfContent.get(content);
                if (known != null && store.fingerprint(known, new StoredBlock()) && gc.guard().protect(known)) {
                    pbn = known;
                    duplicates++;
                } else {
                    pbn = storeBlock(content);
                    stored += BS;
                    newBlocks++;
                }
            }
            m.add(e.getKey(), pbn);
            next[(int) (long) e.getKey()] = content;
        }
        store.sync();
        long parent = fresh ? 0 : v.latest();
        CommittedSnapshot c = commit.commit(new SnapshotCommit.Request(v.id, BS, v.blocks * (long) BS, parent, m,
                m.size() * (long) BS, m.size(), newBlocks, stored));
        long seq = c.snapshot().sequence();
        note("  backup " + v.id.name() + "@" + seq + " (" + m.size() + " entries, " + newBlocks + " new)"
                + (skipAfterCommit ? ", then crash before the GC log has it" : ""));
        assertThat(seq).isGreaterThan(parent);
        ModelSnapshot s = new ModelSnapshot(seq, c.snapshot().createdAtMillis(), next);
        s.minExpiry = fresh ? s.createdAt + 12 * HOUR : periodExpiry(v.policy, s.createdAt);
        v.current = next;
        v.snapshots.put(seq, s);
        noteExpiry(v, s);
        snapshotsCommitted++;
        if (fresh) {
            v.policy = "12h"; // the server's default, until set
            setPolicy(v, POLICIES[r.nextInt(POLICIES.length)]);
        }
    }

    /** New content mostly; else a duplicate of this volume's current data or of any block seen so far. */
    private long pickContent(Random r, ModelVolume v) {
        int k = r.nextInt(10);
        if (k < 2 && v.current != null) {
            long c = v.current[r.nextInt(v.blocks)];
            if (c != 0) {
                return c;
            }
        }
        if (k < 4 && !contents.isEmpty()) {
            return contents.get(r.nextInt(contents.size()));
        }
        long c = nextContent++;
        contents.add(c);
        return c;
    }

    /** Stores content {@code id} the way a backup does: zstd if it pays, else raw; protected by the grace guard. */
    private long storeBlock(long id) {
        content(id, raw);
        byte[] fp = sha.digest(raw);
        int n = codec.compress(raw, 0, BS, packed, 0);
        long pbn = n > 0
                ? store.append(fp, 0, packed, 0, n, FormatVersions.CODEC_ZSTD, BS)
                : store.append(fp, 0, raw, 0, BS, FormatVersions.CODEC_RAW, BS);
        assertThat(gc.guard().protect(pbn)).isTrue();
        pbnOfContent.put(id, pbn);
        return pbn;
    }

    /** Deterministic block content: a random head of 256..4096 bytes, then a repeating pattern (so zstd pays for some). */
    private static void content(long id, byte[] out) {
        Random g = new Random(id * 0x9E3779B97F4A7C15L);
        int head = 256 * (1 + (int) Math.floorMod(id, 16L));
        for (int i = 0; i < head; i += 8) {
            long x = g.nextLong();
            for (int b = 0; b < 8; b++) {
                out[i + b] = (byte) (x >>> (8 * b));
            }
        }
        for (int i = head; i < out.length; i++) {
            out[i] = out[i % 64];
        }
    }

    private void advanceClock(Random r) {
        int k = r.nextInt(10);
        clock.millis += k < 6 ? (10 + r.nextInt(300)) * MINUTE : k < 9 ? (5 + r.nextInt(30)) * HOUR : (2 + r.nextInt(8)) * DAY;
    }

    private void cycle() {
        long now = clock.millis;
        GcService.CycleReport rep = gc.runCycle(now);
        note("  cycle: " + rep.snapshotsDeleted() + " snapshots expired, " + rep.sweep().freed() + " blocks freed, "
                + rep.compaction().logsRewritten() + " logs rewritten, " + rep.compaction().logsDeleted() + " deleted");
        cycles++;
        blocksFreed += rep.sweep().freed();
        GcService.CompactionReport c = rep.compaction();
        assertThat(c).isNotNull();
        assertThat(c.logsSkippedCorrupt()).isZero();
        logsRewritten += c.logsRewritten();
        logsDeleted += c.logsDeleted();
        bytesReclaimed += c.bytesReclaimed();
        String context = "cycle at " + Instant.ofEpochMilli(now);
        // snapshots may only have gone by retention, and only if retention allowed it
        int expired = 0;
        for (ModelVolume v : volumes) {
            if (!v.exists()) {
                assertThat(catalog.volume(v.id)).as(context).isEmpty();
                continue;
            }
            List<Long> kept = catalog.snapshots(v.id).stream().map(SnapshotRecord::sequence).toList();
            assertThat(v.snapshots.keySet()).as(context + " " + v.id.name()).containsAll(kept);
            int keepLast = keepLast(v.policy);
            List<Long> newest = new ArrayList<>(v.snapshots.descendingKeySet()).subList(0, Math.min(Math.max(keepLast, 1),
                    v.snapshots.size()));
            for (ModelSnapshot s : new ArrayList<>(v.snapshots.values())) {
                if (kept.contains(s.sequence)) {
                    continue;
                }
                String what = context + ": " + v.id.name() + "@" + s.sequence + " (policy " + v.policy + ")";
                assertThat(s.held).as(what + " was held").isFalse();
                assertThat(newest).as(what + " is among the newest kept by keep-last").doesNotContain(s.sequence);
                assertThat(s.minExpiry).as(what + " expired before its period").isLessThanOrEqualTo(now);
                v.snapshots.remove(s.sequence);
                expired++;
            }
        }
        assertThat(expired).as(context).isEqualTo(rep.snapshotsDeleted());
        snapshotsExpired += expired;
        assertCatalogMatchesModel(context);
        for (ModelVolume v : volumes) {
            for (ModelSnapshot s : v.snapshots.values()) {
                assertRestores(v, s, context);
            }
        }
        FsckReport f = gc.fsck(now);
        assertThat(f.clean()).as(context + "\n" + f.toText()).isTrue(); // no leak past expiry, nothing untracked
    }

    /**
     * Reclaim-now (issue #11): frees every block no retained snapshot references, whatever its expiry.
     * Sometimes cancelled at a random safe point (then possibly a crash), which must lose nothing.
     * After a full run: every retained snapshot restores, fsck is clean (no leak even before any
     * expiry), and the store holds exactly the blocks fsck's mark references (no backup is open here).
     */
    private void reclaimNow(Random r) {
        int cancelAfter = r.nextInt(3) == 0 ? r.nextInt(4) : -1;
        org.holdfast.server.jobs.JobContext job = cancelAfter >= 0 ? new org.holdfast.server.jobs.CancelAfterChecks(cancelAfter)
                : org.holdfast.server.jobs.CancelAfterChecks.never();
        String context = "reclaim-now at " + Instant.ofEpochMilli(clock.millis);
        GcService.ReclaimReport rep;
        try {
            rep = gc.reclaimNow(job);
        } catch (org.holdfast.server.jobs.JobCancelledException e) {
            reclaimsCancelled++;
            note("  reclaim-now cancelled after " + cancelAfter + " safe points" + (r.nextBoolean() ? ", then crash" : ""));
            if (recent.peekLast().endsWith("crash")) {
                crashAndReopen();
            }
            assertCatalogMatchesModel(context + " (cancelled)");
            return;
        }
        note("  reclaim-now: " + rep.snapshotsMarked() + " snapshots mark " + rep.blocksMarked() + " blocks, "
                + rep.blocksFreed() + " freed (" + rep.bytesFreed() + " bytes)");
        reclaimedNow += rep.blocksFreed();
        assertCatalogMatchesModel(context);
        for (ModelVolume v : volumes) {
            for (ModelSnapshot s : v.snapshots.values()) {
                assertRestores(v, s, context);
            }
        }
        FsckReport f = gc.fsck(clock.millis);
        assertThat(f.clean()).as(context + "\n" + f.toText()).isTrue();
        assertThat(rep.blocksMarked()).as(context).isEqualTo(f.referencedPbns());
        long[] stored = {0};
        store.locations().forEach((pbn, logId, offset, storedLength, fps, fpOff) -> {
            stored[0]++;
            return true;
        });
        assertThat(stored[0]).as(context + ": stored blocks = blocks the checker's mark references").isEqualTo(f.referencedPbns());
    }

    private void deleteSnapshot(Random r) {
        ModelVolume v = anyExisting(r);
        if (v == null) {
            return;
        }
        List<ModelSnapshot> candidates = new ArrayList<>(v.snapshots.values());
        ModelSnapshot s = candidates.get(r.nextInt(candidates.size()));
        if (s.sequence == v.latest() || s.held) {
            assertThatThrownBy(() -> gc.deleteSnapshot(v.id, s.sequence)).isInstanceOf(GcConflictException.class);
            return;
        }
        note("  delete snapshot " + v.id.name() + "@" + s.sequence + " of " + v.snapshots.keySet());
        gc.deleteSnapshot(v.id, s.sequence);
        v.snapshots.remove(s.sequence);
    }

    private void toggleHold(Random r) {
        ModelVolume v = anyExisting(r);
        if (v == null) {
            return;
        }
        List<ModelSnapshot> all = new ArrayList<>(v.snapshots.values());
        ModelSnapshot s = all.get(r.nextInt(all.size()));
        note("  " + (s.held ? "release" : "place") + " hold " + v.id.name() + "@" + s.sequence);
        if (s.held) {
            gc.releaseHold(v.id, s.sequence);
        } else {
            gc.placeHold(v.id, s.sequence);
        }
        s.held = !s.held;
        assertThat(gc.held(v.id, s.sequence)).isEqualTo(s.held);
    }

    private void changePolicy(Random r) {
        ModelVolume v = anyExisting(r);
        if (v != null) {
            setPolicy(v, POLICIES[r.nextInt(POLICIES.length)]);
        }
    }

    private void setPolicy(ModelVolume v, String policy) {
        note("  policy " + v.id.name() + " " + v.policy + " -> " + policy);
        gc.setPolicy(v.id, policy);
        v.policy = policy;
        // a longer period extends existing snapshots; a shorter one leaves them as they were
        for (ModelSnapshot s : v.snapshots.values()) {
            s.minExpiry = Math.max(s.minExpiry, periodExpiry(policy, s.createdAt));
            noteExpiry(v, s);
        }
    }

    private void crash(Random r) {
        ModelVolume v = anyExisting(r);
        if (v != null && r.nextBoolean()) {
            skipAfterCommit = true; // dies right after the catalog batch is durable, before the GC log has it
            backup(r, v);
        }
        note("  crash and reopen");
        crashAndReopen();
    }

    private void deleteVolume(Random r) {
        ModelVolume v = anyExisting(r);
        if (v == null) {
            return;
        }
        if (v.snapshots.values().stream().anyMatch(s -> s.held)) {
            assertThatThrownBy(() -> gc.deleteVolume(v.id, VolumeGate.NONE)).isInstanceOf(GcConflictException.class);
            return;
        }
        note("  delete volume " + v.id.name());
        GcService.VolumeDeletion d = gc.deleteVolume(v.id, VolumeGate.NONE);
        assertThat(d.snapshotsDeleted()).isEqualTo(v.snapshots.size());
        v.snapshots.clear();
        v.current = null;
    }

    private void noteExpiry(ModelVolume v, ModelSnapshot s) {
        long e = gc.expiry(v.id, s.sequence).orElseThrow();
        assertThat(e).as("expiry of %s@%d", v.id.name(), s.sequence).isGreaterThanOrEqualTo(s.minExpiry);
        maxExpiry = Math.max(maxExpiry, e);
        longestRetention = Math.max(longestRetention, e - s.createdAt);
    }

    private ModelVolume anyExisting(Random r) {
        List<ModelVolume> existing = volumes.stream().filter(ModelVolume::exists).toList();
        return existing.isEmpty() ? null : existing.get(r.nextInt(existing.size()));
    }

    /** Every volume gone, far in the future: every block freed, every sealed log gone. */
    private void finalSweep(long seed) throws Exception {
        for (ModelVolume v : volumes) {
            if (!v.exists()) {
                continue;
            }
            for (ModelSnapshot s : v.snapshots.values()) {
                if (s.held) {
                    gc.releaseHold(v.id, s.sequence);
                    s.held = false;
                }
            }
            gc.deleteVolume(v.id, VolumeGate.NONE);
            v.snapshots.clear();
        }
        // past every expiry any snapshot ever had and every grace: nothing may be left
        assertThat(maxExpiry).as("seed %d: some snapshot never expires", seed).isLessThan(clock.millis + 3650 * DAY);
        clock.millis = Math.max(clock.millis, maxExpiry) + GRACE + DAY;
        if (s3 != null) {
            store.archive().awaitUploads(60_000); // compaction waits for a log's upload before it touches it
        }
        cycle();
        cycle(); // the first may leave logs whose last records it freed for the next compaction
        java.util.Set<Long> left = new java.util.TreeSet<>();
        store.locations().forEach((pbn, logId, offset, storedLength, fps, fpOff) -> {
            left.add(pbn);
            return true;
        });
        if (!left.isEmpty()) {
            StringBuilder gma = new StringBuilder();
            gc.pipeline().commitAll();
            gc.pipeline().gma().scan(gc.pipeline().chunkLimit(), (pbn, rc, pins, flags, expiry) -> {
                if (left.contains(pbn) && gma.length() < 2000) {
                    gma.append(String.format("%n  PBN %d: RC %d, pins %d, flags %d, ET %s", pbn, rc, pins, flags,
                            expiry == Long.MAX_VALUE ? "never" : Instant.ofEpochMilli(expiry)));
                }
            });
            throw new AssertionError("seed " + seed + ": " + left.size() + " blocks still stored with no volume left at "
                    + Instant.ofEpochMilli(clock.millis) + "; their GMA entries:" + gma);
        }
        try (var files = Files.list(dir.resolve("data"))) {
            long logs = files.filter(p -> p.getFileName().toString().startsWith(FormatVersions.DATA_LOG_PREFIX)).count();
            assertThat(logs).as("seed %d: only the active data log is left", seed).isLessThanOrEqualTo(1);
        }
        FsckReport f = gc.fsck(clock.millis);
        assertThat(f.clean()).as(f.toText()).isTrue();
        assertThat(f.snapshotsChecked()).isZero();
        if (s3 != null) {
            try (ObjectStore objects = S3ObjectStore.open(s3.settings(S3_PREFIX))) {
                assertThat(objects.list(S3_NODE + "/")).as("seed %d: objects left in the bucket", seed).isEmpty();
            }
            System.out.printf("GcStoreModelTest seed %d on s3: %d objects deleted, %d logs fetched back%n", seed,
                    store.archive().objectsDeleted(), store.archive().stats().logsFetched());
        }
    }

    // ------------------------------------------------------------------ checks

    private void assertNoLossNoBookkeepingError(String context) {
        FsckReport f = gc.fsck(clock.millis);
        assertThat(f.dataLoss()).as(context + "\n" + f.toText()).isFalse();
        assertThat(f.bookkeepingErrors()).as(context + "\n" + f.toText()).isFalse();
    }

    private void assertCatalogMatchesModel(String context) {
        for (ModelVolume v : volumes) {
            if (!v.exists()) {
                assertThat(catalog.volume(v.id)).as(context + " " + v.id.name()).isEmpty();
                continue;
            }
            assertThat(catalog.snapshots(v.id)).extracting(SnapshotRecord::sequence).as(context + " " + v.id.name())
                    .containsExactlyElementsOf(v.snapshots.keySet());
            assertThat(catalog.requireVolume(v.id).latestSequence()).isEqualTo(v.latest());
        }
    }

    /** Reads snapshot {@code s} like a restore does (map scan, batched store reads, decode) and compares every block. */
    private void assertRestores(ModelVolume v, ModelSnapshot s, String context) {
        String what = context + ": " + v.id.name() + "@" + s.sequence;
        long[] lbns = new long[v.blocks];
        long[] pbns = new long[v.blocks];
        int n = 0;
        try (MapCursor c = catalog.mapCursor(catalog.requireVolume(v.id).internalId())) {
            c.startScan(s.sequence, 0, v.blocks);
            while (c.nextMapped()) {
                if (c.pbn() != 0) {
                    lbns[n] = c.lbn();
                    pbns[n] = c.pbn();
                    n++;
                }
            }
        }
        long nonZero = Arrays.stream(s.content).filter(x -> x != 0).count();
        assertThat(n).as(what + " mapped blocks").isEqualTo(nonZero);
        for (int done = 0; done < n; ) {
            int k = store.readBatch(pbns, done, n - done, batch);
            assertThat(k).isPositive();
            for (int i = 0; i < k; i++) {
                int lbn = (int) lbns[done + i];
                assertThat(batch.pbn(i)).isEqualTo(pbns[done + i]);
                long id = s.content[lbn];
                assertThat(id).as(what + " LBN " + lbn + " should be a zero block").isNotZero();
                codec.decode(batch.codec(i), batch.data(), batch.dataOffset(i), batch.storedLength(i), raw, 0, BS);
                content(id, expected);
                if (!Arrays.equals(raw, expected)) {
                    throw new AssertionError(what + " LBN " + lbn + " PBN " + pbns[done + i] + " differs from content " + id);
                }
            }
            done += k;
        }
        restoresChecked++;
    }

    // ------------------------------------------------------------------ policy arithmetic of the model

    private static long periodExpiry(String policy, long createdAt) {
        if (policy.endsWith("h") && !policy.contains("=")) {
            return createdAt + Long.parseLong(policy.substring(0, policy.length() - 1)) * HOUR;
        }
        if (policy.endsWith("d") && !policy.contains("=")) {
            return createdAt + Long.parseLong(policy.substring(0, policy.length() - 1)) * DAY;
        }
        return 0; // a schedule: no simple lower bound
    }

    private static int keepLast(String policy) {
        for (String part : policy.split(",")) {
            if (part.startsWith("keep-last=")) {
                return Integer.parseInt(part.substring("keep-last=".length()));
            }
        }
        return 0;
    }
}
