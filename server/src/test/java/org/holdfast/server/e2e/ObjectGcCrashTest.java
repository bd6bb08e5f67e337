package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.holdfast.common.kill.KillPoint;
import org.holdfast.common.kill.KillPoints;
import org.holdfast.server.e2e.VolumeImage.Content;
import org.holdfast.server.store.Bytes;
import org.holdfast.server.store.CheckedIterator;
import org.holdfast.server.store.DataDirectory;
import org.holdfast.server.store.DataLog;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.object.ObjectStore;
import org.holdfast.server.store.object.S3ObjectStore;
import org.holdfast.server.store.object.S3ProxyFixture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real server on {@code backend=s3} (S3Proxy in this JVM) whose GC compacts every second (64 KiB
 * logs, keep-last=2, threshold 0.8), killed during compaction and deletion on objects: once at each
 * object point ({@code compaction.afterCopy}, {@code object.compaction.afterUpload},
 * {@code compaction.afterSwitch}, {@code object.retire.beforeDelete}, {@code object.retire.afterDelete})
 * by a halt there, and once by SIGKILL the moment a {@code .compact} file appears. The restart after
 * a halt is the next iteration's process, already armed at the next point (one start per kill, not
 * two); after each restart the newest snapshot is listed, unless that process halts at its point
 * first (its GC redoing the interrupted compaction): then the listing after the following restart
 * checks it (a lost snapshot cannot come back). At the end, with the server stopped, the bucket
 * holds exactly the objects the catalog's upload records name (none leaked, none missing) and no
 * delete intent is left; then with every uploaded log wiped from the data directory every retained
 * snapshot restores byte-identical from the object store, and fsck is clean.
 */
class ObjectGcCrashTest {
    private static final int BLOCK = 4096;
    private static final int MIB = 1 << 20;
    private static final String PREFIX = "gc/";
    private static final String NODE = "node-gc";

    private final LogDir logs = new LogDir("ObjectGcCrashTest");
    private final AgentProcess agent = new AgentProcess(logs);

    @TempDir
    Path work;

    @Test
    void server_killedDuringCompactionAndDeletionOnObjects_bucketMatchesCatalog_everyRetainedSnapshotRestoresFromTheStore()
            throws Exception {
        CrashLoop loop = new CrashLoop("object compaction crash loop", 1);
        Random random = loop.random();
        List<KillPoint> points = List.of(KillPoints.COMPACTION_AFTER_COPY, KillPoints.OBJECT_COMPACTION_AFTER_UPLOAD,
                KillPoints.COMPACTION_AFTER_SWITCH, KillPoints.OBJECT_RETIRE_BEFORE_DELETE, KillPoints.OBJECT_RETIRE_AFTER_DELETE);
        String volume = "object-gc";
        Path source = work.resolve("volume.img");
        Path state = Files.createDirectories(work.resolve("state"));
        Map<String, Path> known = new LinkedHashMap<>();
        try (S3ProxyFixture s3 = S3ProxyFixture.start(work.resolve("s3"))) {
            Map<String, String> props = Map.ofEntries(
                    Map.entry("holdfast.store.backend", "s3"),
                    Map.entry("holdfast.store.s3.endpoint", s3.endpoint().toString()),
                    Map.entry("holdfast.store.s3.bucket", S3ProxyFixture.BUCKET),
                    Map.entry("holdfast.store.s3.prefix", PREFIX),
                    Map.entry("holdfast.store.s3.credentials-file", s3.settings("").credentialsFile().toString()),
                    Map.entry("holdfast.store.s3.node", NODE),
                    Map.entry("holdfast.store.log-roll-size", "64KB"),
                    Map.entry("holdfast.gc.interval", "1s"),
                    Map.entry("holdfast.gc.grace", "2s"),
                    Map.entry("holdfast.gc.default-retention", "keep-last=2"),
                    Map.entry("holdfast.gc.compaction-threshold", "0.8"),
                    Map.entry("holdfast.verify.schedule", "0"),
                    Map.entry("holdfast.verify.window", "0"));
            Path dataDir;
            String newest = null;
            int halted = 0;
            Path lastInFlight = work.resolve("none");
            // armed from its first start: two snapshots expire nothing (keep-last=2), so no GC run compacts before
            // the first backup of iteration 0 expires the oldest; each later start is the restart after a kill
            try (ServerProcess server = ServerProcess.startArmed(work.resolve("server"), "exact", props, logs, points.get(0), 1)) {
                dataDir = server.dataDir();
                VolumeImage img = VolumeImage.generate(loop.seed(), 4 * MIB);
                for (int i = 0; i < 2; i++) {
                    img.fill(img.randomOffset(MIB, BLOCK), MIB, Content.RANDOM);
                    newest = backupKnown(server, volume, img, source, state, known);
                }
                int listings = 0;
                for (int it = 0; it <= points.size(); it++) {
                    KillPoint armed = it < points.size() ? points.get(it) : null;
                    // backups free older snapshots' blocks (keep-last=2), so the next GC runs compact and delete logs;
                    // the restarted process may have halted at its point already, redoing the interrupted compaction
                    boolean died = armed != null && server.awaitKillPoint(Duration.ZERO);
                    boolean beforeBackups = died;
                    long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
                    while (!died && System.nanoTime() < deadline) {
                        img.fill(img.randomOffset(MIB, BLOCK), MIB, Content.RANDOM);
                        img.scribble(20);
                        img.writeTo(source);
                        Path inFlight = work.resolve("inflight-" + it + "-" + known.size() + ".img");
                        Files.copy(source, inFlight);
                        lastInFlight = inFlight;
                        AgentProcess.Running run = agent.start(AgentProcess.backupArgs(server, volume, source, state,
                                "--block-size", String.valueOf(BLOCK)));
                        if (armed != null) {
                            died = server.awaitKillPoint(Duration.ofSeconds(8));
                        } else {
                            long t0 = System.nanoTime();
                            while (!compactFilePresent(dataDir.resolve("data")) && System.nanoTime() - t0 < 8_000_000_000L) {
                                Thread.sleep(1);
                            }
                            if (compactFilePresent(dataDir.resolve("data"))) {
                                Thread.sleep(random.nextInt(40));
                                died = server.kill();
                            }
                        }
                        AgentResult backup = run.await();
                        if (backup.exitCode() == 0) { // acknowledged (the server may halt right after)
                            newest = BackupSummary.parse(backup).snapshotId();
                            known.put(newest, inFlight);
                        }
                    }
                    assertThat(died).as("iteration %d (%s): the server died during a compaction\n%s", it,
                            armed == null ? "SIGKILL at a .compact file" : armed.name(), server.diagnostics()).isTrue();
                    loop.record(armed, armed != null);
                    halted += armed != null ? 1 : 0;
                    KillPoint next = it + 1 < points.size() ? points.get(it + 1) : null;
                    if (next != null) {
                        server.armKillPoint(next, 1);
                    }
                    server.start();
                    List<String> listed = CrashLoop.snapshotIdsUnlessHalted(server, volume, next);
                    if (listed != null) {
                        newest = latest(listed, known, lastInFlight, newest);
                        listings++;
                    }
                    System.out.println("[e2e] iteration " + it + ": " + (armed == null ? "SIGKILL with a .compact file" : "halted at "
                            + armed.name()) + (beforeBackups ? " (in the restart, before any backup)" : "") + "; restarted"
                            + (next == null ? "" : " armed at " + next.name()) + ", " + known.size() + " snapshots known"
                            + (listed != null ? ", newest listed" : ", halted at it before the listing"));
                }
                System.out.println("[e2e] " + listings + " of " + (points.size() + 1) + " restarts listed before a halt");
                GcCycles.awaitMore(server, 2); // more GC runs over the restarted server: at least one whole, not a fixed wait
                server.close(); // an orderly stop: what the catalog says is final
                checkAndWipe(s3, dataDir);
                server.start();
                // the agent protocol's listing over one connection (the agent restores the newest below)
                List<String> listed = WireProbe.snapshotIds(server, volume).stream()
                        .sorted(java.util.Comparator.comparingLong(id -> Long.parseLong(id.substring(id.lastIndexOf('@') + 1)))).toList();
                assertThat(known.keySet()).containsAll(listed);
                // keep-last=2 keeps the newest two; an older one listed may still expire at the next GC run
                List<String> retained = listed.subList(Math.max(0, listed.size() - 2), listed.size());
                assertThat(retained).contains(newest).hasSize(2);
                // both over the wire (one connection, every block checked against its fingerprint); the agent itself
                // restores the newest
                Map<String, Path> expected = new LinkedHashMap<>();
                retained.forEach(id -> expected.put(id, known.get(id)));
                RestoreCheck.assertRestoreOverTheWire(server, volume, expected);
                new RestoreCheck(agent, work).assertRestores(server, volume, newest, known.get(newest), BLOCK);
                assertThat(metric(server, "holdfast_objects_cache_range_gets_total")).as("the wiped logs were read from the store").isPositive();
                JsonNode fsck = server.runJob("/api/v1/gc/fsck", Duration.ofMinutes(2));
                assertThat(fsck.path("state").asText()).as(fsck.toString()).isEqualTo("succeeded");
                assertThat(fsck.path("result").path("dataLoss").asBoolean()).as(fsck.toString()).isFalse();
                System.out.println("[e2e] " + retained.size() + " retained snapshots restored from the object store after the"
                        + " uploaded logs were wiped");
            }
            String report = loop.report(points::contains);
            assertThat(loop.uncovered(points::contains)).as(report).isEmpty();
            assertThat(halted).isEqualTo(points.size());
        }
    }

    /**
     * With the server stopped: the bucket holds exactly the objects the catalog's upload records
     * name and no delete intent is left; then every uploaded log's local file is deleted.
     */
    private static void checkAndWipe(S3ProxyFixture s3, Path dataDir) throws Exception {
        Set<String> named = new TreeSet<>();
        List<Path> uploaded = new ArrayList<>();
        try (DataDirectory dd = DataDirectory.open(dataDir); MetadataDb db = MetadataDb.open(dd.catalogDir());
             CheckedIterator it = db.iterator(MetadataDb.Column.META)) {
            for (it.seek("store.object.".getBytes(StandardCharsets.UTF_8)); it.isValid(); it.next()) {
                String key = new String(it.key(), StandardCharsets.UTF_8);
                if (!key.startsWith("store.object.")) {
                    break;
                }
                assertThat(key).as("a delete intent left after an orderly stop").doesNotStartWith("store.object.retire/");
                if (key.startsWith("store.object.log/")) {
                    int id = Integer.parseUnsignedInt(key.substring("store.object.log/".length()), 16);
                    byte[] v = it.value();
                    String node = new String(v, 8, v.length - 8, StandardCharsets.UTF_8);
                    named.add(String.format("%s/logs/%08x-%016x.hfl", node, id, Bytes.getLong(v, 0)));
                    uploaded.add(dd.dataDir().resolve(DataLog.fileName(id)));
                }
            }
        }
        try (ObjectStore objects = S3ObjectStore.open(s3.settings(PREFIX))) {
            assertThat(new TreeSet<>(objects.list(NODE + "/logs/"))).as("objects in the bucket vs the upload records").isEqualTo(named);
        }
        assertThat(named).as("logs in the store").isNotEmpty();
        int wiped = 0;
        for (Path p : uploaded) {
            wiped += Files.deleteIfExists(p) ? 1 : 0;
        }
        assertThat(wiped).as("uploaded logs wiped locally").isPositive();
        System.out.println("[e2e] " + named.size() + " objects in the bucket, each named by the catalog; " + wiped + " logs wiped");
    }

    /**
     * The newest listed snapshot, which must include the newest acknowledged one; one that appeared
     * from the backup in flight when the server died (committed, answer lost) is known by its image.
     */
    private static String latest(List<String> listed, Map<String, Path> known, Path inFlight, String newest) {
        assertThat(listed).as("the newest acknowledged snapshot survives").contains(newest);
        for (String id : listed) {
            if (!known.containsKey(id)) {
                assertThat(Files.exists(inFlight)).as("snapshot %s appeared from no backup in flight", id).isTrue();
                known.put(id, inFlight);
                newest = id;
            }
        }
        return newest;
    }

    private String backupKnown(ServerProcess server, String volume, VolumeImage img, Path source, Path state,
                               Map<String, Path> known) throws Exception {
        img.writeTo(source);
        BackupSummary s = agent.backup(server, volume, source, state, "--block-size", String.valueOf(BLOCK));
        Path expected = work.resolve("expected-" + known.size() + ".img");
        Files.copy(source, expected);
        known.put(s.snapshotId(), expected);
        return s.snapshotId();
    }

    private static boolean compactFilePresent(Path logsDir) throws java.io.IOException {
        try (var s = Files.list(logsDir)) {
            return s.anyMatch(p -> p.getFileName().toString().endsWith(".compact"));
        } catch (java.nio.file.NoSuchFileException e) {
            return false;
        }
    }

    private static long metric(ServerProcess server, String name) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "(?:\\{[^}]*\\})? ([0-9.E+]+)$")
                .matcher(server.get("/actuator/prometheus").body());
        return m.find() ? (long) Double.parseDouble(m.group(1)) : -1;
    }
}
