package org.holdfast.server.gc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.kill.KillPoints;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.gc.bosc.BoscSettings;
import org.holdfast.gc.check.FsckReport;
import org.holdfast.gc.gma.GmaFormat;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.MapCursor;
import org.holdfast.server.catalog.SessionMap;
import org.holdfast.server.catalog.SnapshotCommit;
import org.holdfast.server.catalog.SnapshotRecord;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.engine.ExactFingerprintIndex;
import org.holdfast.server.engine.FingerprintIndex;
import org.holdfast.server.store.DataDirectory;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.StoredBlock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The GC metadata rebuild over real stores: after a random history (commits on several volumes with
 * shared blocks, shrinks, holds, expiries, early snapshot and volume deletions, sweeps) the rebuilt
 * GMA has the incremental bookkeeping's RCs and pins, fsck is clean, a sweep frees nothing a retained
 * snapshot needs and every retained snapshot reads back byte for byte; a rebuild crashed at any step
 * and run again gives the same GMA.
 */
class GcMetadataRebuildTest {
    private static final int BS = 4096;
    private static final long HOUR = 3_600_000L;
    private static final Duration GRACE = Duration.ofHours(2);
    private static final String[] VOLUMES = {"rb-a", "rb-b", "rb-c"};

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
    private boolean open;
    /** Seed of every stored block's payload. */
    private final Map<Long, Long> seeds = new HashMap<>();
    /** Expected content of every committed snapshot: volume -> sequence -> PBN per LBN. */
    private final Map<String, TreeMap<Long, long[]>> model = new HashMap<>();

    /** The PBN range of the store (and GC metadata) under test. */
    private PbnRange range = PbnRange.STANDALONE;

    private void open() {
        fixture = GcStoreFixture.open(dir, clock, 1L << 20, GRACE, 4, hook -> hook, CommitParts.DEFAULT_PART_ENTRIES, null,
                ExactFingerprintIndex::new, range);
        db = fixture.db;
        store = fixture.store;
        index = fixture.index;
        catalog = fixture.catalog;
        gc = fixture.gc;
        commit = fixture.commit;
        open = true;
    }

    private void close() {
        if (open) {
            fixture.close();
            open = false;
        }
    }

    @AfterEach
    void tearDown() {
        close();
    }

    private long newBlock(Random r) {
        long seed = r.nextLong();
        byte[] payload = payload(seed);
        long pbn = store.append(sha256(payload), 0, payload, 0, BS, FormatVersions.CODEC_RAW, BS);
        store.sync();
        assertThat(gc.guard().protect(pbn)).isTrue();
        seeds.put(pbn, seed);
        return pbn;
    }

    private static byte[] payload(long seed) {
        byte[] p = new byte[BS];
        new Random(seed).nextBytes(p);
        return p;
    }

    private static byte[] sha256(byte[] b) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(b);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }

    private boolean stored(long pbn) {
        return store.fingerprint(pbn, new StoredBlock());
    }

    /** A block for a commit: new, a duplicate of one any volume maps now, or the zero block. */
    private long pick(Random r) {
        int k = r.nextInt(10);
        if (k == 0) {
            return 0;
        }
        if (k <= 3) {
            List<Long> candidates = new ArrayList<>();
            for (TreeMap<Long, long[]> snaps : model.values()) {
                if (!snaps.isEmpty()) {
                    for (long p : snaps.lastEntry().getValue()) {
                        if (p != 0) {
                            candidates.add(p);
                        }
                    }
                }
            }
            if (!candidates.isEmpty()) {
                long p = candidates.get(r.nextInt(candidates.size()));
                if (stored(p) && gc.guard().protect(p)) {
                    return p; // matched as a duplicate, protected as the ingest does
                }
            }
        }
        return newBlock(r);
    }

    private void commitRandom(Random r, String name) {
        TreeMap<Long, long[]> snaps = model.computeIfAbsent(name, k -> new TreeMap<>());
        long parent = snaps.isEmpty() ? 0 : snaps.lastKey();
        long[] prev = snaps.isEmpty() ? new long[0] : snaps.lastEntry().getValue();
        int blocks = prev.length == 0 || r.nextInt(6) == 0 ? 8 + r.nextInt(40) : prev.length; // sometimes grow or shrink
        long[] cur = Arrays.copyOf(prev, blocks);
        SessionMap m = new SessionMap(16);
        int changes = 1 + r.nextInt(Math.min(blocks, 12));
        int[] lbns = r.ints(0, blocks).distinct().limit(changes).sorted().toArray();
        for (int l : lbns) {
            long p = pick(r);
            m.add(l, p);
            cur[l] = p;
        }
        SnapshotRecord s = commit.commit(new SnapshotCommit.Request(new VolumeId(name), BS, (long) blocks * BS, parent, m,
                m.size() * (long) BS, m.size(), m.size(), 0)).snapshot();
        snaps.put(s.sequence(), cur);
    }

    /** A random history; ends with the server stopped in an orderly way. */
    private void randomHistory(long seed, int steps) {
        Random r = new Random(seed);
        open();
        for (int i = 0; i < steps; i++) {
            String name = VOLUMES[r.nextInt(VOLUMES.length)];
            VolumeId vid = new VolumeId(name);
            int op = r.nextInt(100);
            List<SnapshotRecord> snaps = catalog.volume(vid).map(v -> catalog.snapshots(v)).orElse(List.of());
            if (op < 60 || snaps.size() < 2) {
                commitRandom(r, name);
                if (snaps.isEmpty() && name.equals(VOLUMES[1])) {
                    gc.setPolicy(vid, "keep-last=2,daily=3");
                }
            } else if (op < 72) {
                long seq = snaps.get(r.nextInt(snaps.size() - 1)).sequence();
                if (gc.held(vid, seq)) {
                    gc.releaseHold(vid, seq);
                } else {
                    gc.placeHold(vid, seq);
                }
            } else if (op < 78) {
                long seq = snaps.get(r.nextInt(snaps.size() - 1)).sequence();
                if (!gc.held(vid, seq)) {
                    gc.deleteSnapshot(vid, seq);
                }
            } else if (op < 80) {
                boolean anyHeld = snaps.stream().anyMatch(s -> gc.held(vid, s.sequence()));
                if (!anyHeld) {
                    gc.deleteVolume(vid, VolumeGate.NONE);
                    model.remove(name);
                }
            } else if (op < 92) {
                clock.millis += r.nextInt(6) * HOUR;
            } else {
                gc.runCycle(clock.millis);
            }
        }
        pruneModel();
        close();
    }

    /** Drops from the model the snapshots the catalog no longer has. */
    private void pruneModel() {
        for (var e : model.entrySet()) {
            VolumeRecord v = catalog.requireVolume(new VolumeId(e.getKey()));
            List<Long> retained = catalog.snapshots(v).stream().map(SnapshotRecord::sequence).toList();
            e.getValue().keySet().retainAll(retained);
        }
    }

    /** PBN -> {rc, pins, expiry, flags} of every USED GMA slot, everything queued applied. */
    private Map<Long, long[]> gmaState() {
        gc.pipeline().commitAll();
        Map<Long, long[]> out = new TreeMap<>();
        gc.pipeline().gma().scan(gc.pipeline().chunkLimit(), (pbn, rc, pins, flags, expiry) ->
                out.put(pbn, new long[] {rc, pins, expiry, flags}));
        return out;
    }

    private static Map<Long, Long> nonZero(Map<Long, long[]> state, int field) {
        Map<Long, Long> out = new TreeMap<>();
        state.forEach((pbn, s) -> {
            if (s[field] != 0) {
                out.put(pbn, s[field]);
            }
        });
        return out;
    }

    /** Rebuilds; crash point 1 mid-build, 2 before verify, 3 between the renames (a {@link KillPoints.Killed}), 0 none. */
    private GcMetadataRebuild.Report rebuild(int crashPoint, int passChunks) {
        try (DataDirectory dd = DataDirectory.open(dir); MetadataDb rdb = MetadataDb.open(dd.catalogDir())) {
            GcMetadataRebuild rb = new GcMetadataRebuild(dd.root(), new Catalog(rdb), new GcMetadataRebuild.Settings(GRACE, passChunks),
                    clock, line -> { });
            if (crashPoint > 0) {
                KillPoints.arm(List.of(KillPoints.GC_REBUILD_AFTER_CHUNK, KillPoints.GC_REBUILD_BEFORE_VERIFY,
                        KillPoints.GC_REBUILD_BETWEEN_RENAMES).get(crashPoint - 1), 1, KillPoints.Mode.THROW);
            }
            try {
                return rb.run();
            } finally {
                KillPoints.disarm();
            }
        }
    }

    private void assertClean(long now) {
        FsckReport f = gc.fsck(now);
        assertThat(f.dataLoss()).as(f.toText()).isFalse();
        assertThat(f.bookkeepingErrors()).as(f.toText()).isFalse();
    }

    /** Every retained snapshot maps what was committed and every block reads back byte for byte. */
    private void assertEverySnapshotReadsBack() {
        int checked = 0;
        StoredBlock b = new StoredBlock();
        for (var e : model.entrySet()) {
            VolumeRecord v = catalog.requireVolume(new VolumeId(e.getKey()));
            assertThat(catalog.snapshots(v).stream().map(SnapshotRecord::sequence).toList())
                    .containsExactlyElementsOf(e.getValue().keySet());
            for (var s : e.getValue().entrySet()) {
                long[] want = s.getValue();
                long[] got = new long[want.length];
                try (MapCursor c = catalog.mapCursor(v.internalId())) {
                    c.startScan(s.getKey(), 0, want.length);
                    while (c.nextMapped()) {
                        got[(int) c.lbn()] = c.pbn();
                    }
                }
                assertThat(got).as("%s@%d", e.getKey(), s.getKey()).containsExactly(want);
                for (long p : want) {
                    if (p != 0) {
                        store.read(p, b);
                        byte[] data = Arrays.copyOfRange(b.data(), b.dataOffset(), b.dataOffset() + b.storedLength());
                        assertThat(data).as("block %d of %s@%d", p, e.getKey(), s.getKey()).isEqualTo(payload(seeds.get(p)));
                    }
                }
                checked++;
            }
        }
        assertThat(checked).isPositive();
    }

    private static void deleteGcDir(Path gcDir) {
        new GcDirectorySwap(gcDir.getParent(), "test").deleteTree(gcDir);
        assertThat(gcDir).doesNotExist();
    }

    @Test
    void rebuild_afterRandomHistory_matchesIncrementalCounts_fsckClean_sweepSafe_snapshotsReadBack() {
        rebuildAfterRandomHistory(11, 12);
    }

    /** The same history on a worker's store: PBNs from 2^40, GC metadata over the range, rebuilt in passes from the range's base. */
    @Test
    void rebuild_rangeStoreAt2To40_matchesIncrementalCounts_fsckClean_sweepSafe_snapshotsReadBack() {
        range = new PbnRange(1L << 40, (1L << 40) + (1L << 30));
        rebuildAfterRandomHistory(13);
    }

    private void rebuildAfterRandomHistory(long... seeds) {
        for (long seed : seeds) {
            randomHistory(seed, 120);
            open();
            assertClean(clock.millis);
            Map<Long, long[]> before = gmaState();
            assertThat(before.keySet()).as("GC metadata only for the store's PBNs").allMatch(range::contains);
            close();
            deleteGcDir(dir.resolve("gc"));
            for (int attempt = 0; attempt < 2; attempt++) { // a refused start must not make the next one count from zero
                assertThatThrownBy(this::open).hasMessageContaining("GC metadata was lost")
                        .hasMessageContaining("holdfast-server gc-rebuild --data-dir " + dir.toAbsolutePath());
            }

            GcMetadataRebuild.Report rep = rebuild(0, 1);
            open();
            Map<Long, long[]> after = gmaState();
            assertThat(nonZero(after, 0)).as("RCs, seed %d", seed).isEqualTo(nonZero(before, 0));
            assertThat(nonZero(after, 1)).as("pins, seed %d", seed).isEqualTo(nonZero(before, 1));
            assertThat(nonZero(before, 0)).isNotEmpty();
            assertThat(nonZero(before, 1)).isNotEmpty();
            long graceEnd = clock.millis + GRACE.toMillis();
            after.forEach((pbn, s) -> {
                if (s[0] == 0 && stored(pbn)) {
                    assertThat(s[2]).as("ET of unreferenced stored %d", pbn).isGreaterThanOrEqualTo(graceEnd);
                }
            });
            assertThat(rep.storedPbns()).isEqualTo(after.keySet().stream().filter(this::stored).count());
            assertThat(rep.referencedMissing()).isZero();
            assertClean(clock.millis);
            assertThat(gc.fsck(clock.millis).clean()).as(gc.fsck(clock.millis).toText()).isTrue();

            // nothing is freed within the grace; after it, only what no retained snapshot needs
            assertThat(gc.runCycle(clock.millis).sweep().freed()).isZero();
            clock.millis = graceEnd + HOUR;
            GcService.CycleReport cycle = gc.runCycle(clock.millis);
            pruneModel();
            assertThat(cycle.sweep().freed() + cycle.snapshotsDeleted()).as("the sweep had work to do").isPositive();
            assertClean(clock.millis);
            assertEverySnapshotReadsBack();
            // and bookkeeping goes on from the rebuilt state
            Random r = new Random(seed * 7);
            for (int i = 0; i < 10; i++) {
                commitRandom(r, VOLUMES[2]);
            }
            assertClean(clock.millis);
            // the sweep skip table survives an orderly restart (the first restart re-protects new blocks)
            close();
            open();
            gc.runCycle(clock.millis);
            close();
            open();
            assertThat(gc.runCycle(clock.millis).sweep().chunksScanned()).as("chunks read by the first sweep after a restart").isZero();
            assertClean(clock.millis);
            close();
            deleteGcDir(dir.resolve("gc"));
            for (String n : VOLUMES) {
                model.remove(n);
            }
            try (Stream<Path> s = Files.list(dir)) {
                s.forEach(new GcDirectorySwap(dir, "test")::deleteTree);
            } catch (java.io.IOException e) {
                throw new AssertionError(e);
            }
        }
    }

    @Test
    void rebuild_crashedAtEachStep_leavesOldStateOrNothing_rerunGivesSameGma() throws Exception {
        randomHistory(21, 80);
        Map<Long, long[]> reference = null;
        for (int point = 0; point <= 3; point++) {
            // a damaged gc/: the checkpoint is garbage, the server refuses to start
            Path cp = dir.resolve("gc").resolve("checkpoint");
            if (point > 0) {
                Files.write(cp, "not a checkpoint".getBytes(StandardCharsets.US_ASCII));
                assertThatThrownBy(this::open).isInstanceOf(RuntimeException.class);
                byte[] damaged = Files.readAllBytes(cp);
                int p = point;
                assertThatThrownBy(() -> rebuild(p, 2)).isInstanceOf(KillPoints.Killed.class);
                if (point < 3) {
                    assertThat(Files.readAllBytes(cp)).as("old state untouched, point %d", point).isEqualTo(damaged);
                    assertThat(dir.resolve(GcMetadataRebuild.BUILD_DIR)).exists();
                } else {
                    assertThat(dir.resolve("gc")).as("between the renames").doesNotExist();
                    assertThatThrownBy(this::open).hasMessageContaining("gc-rebuild");
                }
            }
            rebuild(0, 2);
            assertThat(dir.resolve(GcMetadataRebuild.BUILD_DIR)).doesNotExist();
            Map<Long, long[]> state = new TreeMap<>();
            try (BoscPipeline p = BoscPipeline.open(dir.resolve("gc"), BoscSettings.defaults())) {
                assertThat(p.openedEmpty()).isFalse();
                p.gma().scan(p.chunkLimit(), (pbn, rc, pins, flags, expiry) -> state.put(pbn, new long[] {rc, pins, expiry, flags}));
            }
            open();
            assertClean(clock.millis);
            close();
            if (reference == null) {
                reference = state;
                assertThat(reference).isNotEmpty();
            } else {
                assertThat(state.keySet()).as("crash point %d", point).isEqualTo(reference.keySet());
                for (var e : reference.entrySet()) {
                    assertThat(state.get(e.getKey())).as("PBN %d after crash point %d", e.getKey(), point).containsExactly(e.getValue());
                }
            }
        }
        try (Stream<Path> s = Files.list(dir)) {
            assertThat(s.filter(p -> p.getFileName().toString().startsWith(GcMetadataRebuild.REPLACED_PREFIX)).count()).as("point 0, 1, 2, 3 (crash), 3 (the empty gc/ of the refused start)").isEqualTo(5);
        }
        open();
        assertEverySnapshotReadsBack();
    }

    /** rc and pins of every USED slot of {@code root/gc}, read directly (no server start in between). */
    private static Map<Long, String> countsOnDisk(Path gcDir) {
        Map<Long, String> out = new TreeMap<>();
        try (BoscPipeline p = BoscPipeline.open(gcDir, BoscSettings.defaults())) {
            p.gma().scan(p.chunkLimit(), (pbn, rc, pins, flags, expiry) -> out.put(pbn, rc + "/" + pins));
        }
        return out;
    }

    private static String sha(Path file) throws Exception {
        return java.util.HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
    }

    @Test
    void rebuildTool_sigkilledAtRandomMoments_leavesOldOrNewOrNone_rerunGivesSameCounts() throws Exception {
        randomHistory(41, 60);
        Path gcDir = dir.resolve("gc");
        String oldGma = sha(gcDir.resolve("gma.dat"));
        Map<Long, String> reference = null;
        for (int i = 0; i < 4; i++) {
            String current = Files.exists(gcDir) ? sha(gcDir.resolve("gma.dat")) : null;
            List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
                    System.getProperty("java.class.path"), "org.holdfast.server.app.HoldfastServer", "gc-rebuild",
                    "--data-dir", dir.toString(), "--grace", "2h");
            Process child = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(dir.resolve("child-" + i + ".log").toFile()).start();
            try {
                Thread.sleep(150 + 350L * i);
            } finally {
                child.destroyForcibly(); // SIGKILL
                child.waitFor();
            }
            System.out.println("[kill " + i + "] after " + (150 + 350L * i) + " ms: gc/ " + (!Files.exists(gcDir) ? "absent"
                    : current != null && current.equals(sha(gcDir.resolve("gma.dat"))) ? "unchanged" : "replaced")
                    + ", build dir " + (Files.exists(dir.resolve(GcMetadataRebuild.BUILD_DIR)) ? "left" : "none"));
            if (Files.exists(gcDir.resolve("gma.dat"))) {
                String now = sha(gcDir.resolve("gma.dat"));
                if (!now.equals(current) && reference != null) {
                    assertThat(countsOnDisk(gcDir)).as("a complete new gc/, kill %d", i).isEqualTo(reference);
                }
            } else {
                assertThat(gcDir).as("kill %d: gc/ is either whole or absent", i).doesNotExist();
            }
            rebuild(0, 2); // the re-run finishes the job
            assertThat(dir.resolve(GcMetadataRebuild.BUILD_DIR)).doesNotExist();
            Map<Long, String> counts = countsOnDisk(gcDir);
            if (reference == null) {
                reference = counts;
                assertThat(reference).isNotEmpty();
            }
            assertThat(counts).as("after kill %d (exit %d)", i, child.exitValue()).isEqualTo(reference);
        }
        assertThat(oldGma).isNotEmpty();
        open();
        assertClean(clock.millis);
        assertEverySnapshotReadsBack();
    }

    @Test
    void tool_json_stoppedServerOnly_badArgumentsChangeNothing() throws Exception {
        randomHistory(31, 30);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        Clock fixed = Clock.fixed(Instant.ofEpochMilli(clock.millis), ZoneOffset.UTC);
        PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8);

        assertThat(GcRebuildToolAccess.run(new String[] {"--data-dir", dir.toString(), "--grace", "7 parsecs"}, o, e, fixed)).isEqualTo(2);
        assertThat(GcRebuildToolAccess.run(new String[] {"--json"}, o, e, fixed)).isEqualTo(2);
        assertThat(GcRebuildToolAccess.run(new String[] {"--data-dir", dir.resolve("nope").toString()}, o, e, fixed)).isEqualTo(3);
        byte[] gma = Files.readAllBytes(dir.resolve("gc").resolve("gma.dat"));
        try (DataDirectory running = DataDirectory.open(dir)) {
            assertThat(GcRebuildToolAccess.run(new String[] {"--data-dir", dir.toString()}, o, e, fixed)).as(err.toString()).isEqualTo(3);
        }
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("in use by another Holdfast server").contains("no rebuilt metadata was swapped in");
        assertThat(Files.readAllBytes(dir.resolve("gc").resolve("gma.dat"))).isEqualTo(gma);
        assertThat(out.size()).isZero();

        err.reset();
        assertThat(GcRebuildToolAccess.run(new String[] {"--data-dir", dir.toString(), "--grace", "2h", "--json"}, o, e, fixed)).isZero();
        String json = out.toString(StandardCharsets.UTF_8).trim();
        assertThat(json).startsWith("{\"result\":\"rebuilt\"").contains("\"replacedDir\":\"gc.replaced-").endsWith("}");
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("pass 1").contains("verifying").contains("swapping");
        open();
        assertClean(clock.millis);
        assertEverySnapshotReadsBack();
        assertThat(GcRebuildTool.parseDuration("PT24H")).isEqualTo(Duration.ofHours(24));
        assertThat(GcRebuildTool.parseDuration("90m")).isEqualTo(Duration.ofMinutes(90));
        assertThat(GmaFormat.PBNS_PER_CHUNK).isPositive();
    }

    @Test
    void damagedGcDirectory_startupFailureReport_namesTheRebuild() {
        var analysis = new org.holdfast.server.app.GcFailureAnalyzer().analyze(new RuntimeException("bean creation",
                new org.holdfast.gc.GcCorruptException("gma-checkpoint", dir.resolve("gc/checkpoint"), null, "bad checkpoint header")));
        assertThat(analysis).isNotNull();
        assertThat(analysis.getDescription()).contains("bad checkpoint header");
        assertThat(analysis.getAction()).contains("holdfast-server gc-rebuild --data-dir");
    }
}
