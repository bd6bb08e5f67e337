package org.holdfast.server.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.holdfast.common.protocol.BackupMode;
import org.holdfast.common.protocol.SnapshotInfo;
import org.holdfast.server.app.CatalogRestoreTool;
import org.holdfast.server.app.HoldfastServer;
import org.holdfast.server.ingest.AgentDriver;
import org.holdfast.server.ingest.IngestServer;
import org.holdfast.server.security.Role;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.LogArchive;
import org.holdfast.server.store.object.S3ProxyFixture;
import org.holdfast.server.verify.DamageReport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A lost server recovered from a catalog backup, on real servers (in-process), a real RocksDB and
 * real data logs, local or in S3Proxy: two volumes backed up over a few generations, a catalog
 * backup, more generations (new logs, new PBNs), then the disk is "lost" (a new, empty data
 * directory; with backend local the data logs copied over, with s3 nothing but the bucket),
 * catalog-restore, start: every snapshot up to the backup restores byte-identical, later ones are
 * gone, fsck is clean, a new backup stores and restores, and no PBN or log id is handed out twice.
 */
class CatalogRestoreTest {
    private static final int BS = 4096;
    private static final int BLOCKS = 48;
    private static final List<String> VOLUMES = List.of("cr-a", "cr-b");

    @TempDir
    Path dir;

    private final HttpClient http = HttpClient.newHttpClient();
    private final ObjectMapper json = new ObjectMapper();

    private ConfigurableApplicationContext start(Path data, Map<String, String> extra) {
        List<String> args = new ArrayList<>(List.of("--holdfast.data-dir=" + data, "--server.port=0", "--server.address=127.0.0.1",
                "--holdfast.tls.enabled=false", "--holdfast.ingest.host=127.0.0.1", "--holdfast.ingest.port=0",
                "--holdfast.store.min-free-space=0", "--holdfast.store.log-roll-size=64KB", "--holdfast.verify.schedule=0",
                "--spring.main.banner-mode=off"));
        extra.forEach((k, v) -> args.add("--" + k + "=" + v));
        return new SpringApplicationBuilder(HoldfastServer.class).run(args.toArray(String[]::new));
    }

    private static int port(ConfigurableApplicationContext ctx) {
        return Integer.parseInt(ctx.getEnvironment().getProperty("local.server.port"));
    }

    /** Generation {@code g} of volume {@code v}: a quarter of the blocks changed from the previous one, the rest random once. */
    private static byte[] image(int v, int g) {
        byte[] img = new byte[BLOCKS * BS];
        new Random(100 + v).nextBytes(img);
        for (int k = 1; k <= g; k++) {
            Random r = new Random(1000L * v + k);
            for (int b = 0; b < BLOCKS / 4; b++) {
                byte[] block = new byte[BS];
                r.nextBytes(block);
                System.arraycopy(block, 0, img, r.nextInt(BLOCKS) * BS, BS);
            }
        }
        return img;
    }

    private static void backUp(ConfigurableApplicationContext ctx, int generation) {
        try (AgentDriver a = new AgentDriver(ctx.getBean(IngestServer.class).port(), TestTokens.issue(ctx, Role.AGENT))) {
            a.hello();
            for (int v = 0; v < VOLUMES.size(); v++) {
                assertThat(a.backup(VOLUMES.get(v), image(v, generation), BS, true).sequence()).isEqualTo(generation);
            }
        }
    }

    private JsonNode job(ConfigurableApplicationContext ctx, String path, Role role) throws Exception {
        String token = TestTokens.issue(ctx, role);
        HttpResponse<String> r = RestCalls.call(http, port(ctx), "POST", path, null, token);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(202);
        return JobPolling.awaitResult(p -> RestCalls.call(http, port(ctx), "GET", p, null, token).body(),
                r.headers().firstValue("Location").orElseThrow());
    }

    private record Tool(int code, String out, String err) {
    }

    private static Tool restoreTool(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = CatalogRestoreTool.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), Clock.systemUTC());
        return new Tool(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private static List<Integer> logIds(Path data) throws Exception {
        if (!Files.isDirectory(data)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(data)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.matches("log-[0-9a-f]{8}\\.hfl"))
                    .map(n -> Integer.parseInt(n.substring(4, 12), 16)).sorted().toList();
        }
    }

    @Test
    void restore_localBackend_dataLogsCopied_oldSnapshotsBack_newerGone_noIdReused() throws Exception {
        scenario(null);
    }

    @Test
    void restore_s3Backend_emptyDisk_logsFromTheBucket_oldSnapshotsBack_newerGone_noIdReused() throws Exception {
        try (S3ProxyFixture s3 = S3ProxyFixture.start(dir.resolve("s3"))) {
            scenario(s3);
        }
    }

    /**
     * The disk is lost right after the catalog backup, before the data log being written then rolled
     * (with the default 256 MB logs that can be days): the backup job sealed that log and waited for
     * its upload, so every snapshot of the backup restores from the bucket alone. Before, the restore
     * tool warned that the backup's newest blocks were gone and those snapshots could not be restored.
     */
    @Test
    void restore_s3Backend_diskLostRightAfterTheBackup_everySnapshotOfTheBackupRestores() throws Exception {
        try (S3ProxyFixture s3 = S3ProxyFixture.start(dir.resolve("s3"))) {
            Path oldData = dir.resolve("old");
            Path backups = dir.resolve("catalog-backups");
            Map<String, String> props = Map.of("holdfast.store.backend", "s3", "holdfast.store.s3.endpoint", s3.endpoint().toString(),
                    "holdfast.store.s3.bucket", s3.bucket(), "holdfast.store.s3.prefix", s3.prefix("right-after/"),
                    "holdfast.store.s3.credentials-file", s3.settings("").credentialsFile().toString());
            Map<String, String> withBackups = new HashMap<>(props);
            withBackups.put("holdfast.catalog.backup.directory", backups.toString());
            try (ConfigurableApplicationContext a = start(oldData, withBackups)) {
                backUp(a, 1);
                backUp(a, 2);
                JsonNode made = job(a, "/api/v1/catalog/backups", Role.ADMIN);
                assertThat(made.get("snapshots").asLong()).isEqualTo(4);
                assertThat(made.get("dataLogsNotInBucket")).as(made.toString()).isNotNull().isEmpty();
            }

            Path newData = dir.resolve("new"); // nothing from the old disk: the bucket and the catalog backup only
            List<String> args = new ArrayList<>(List.of("--data-dir", newData.toString(), "--from", backups.toString()));
            props.forEach((k, v) -> args.add("--" + k + "=" + v));
            Tool restored = restoreTool(args.toArray(String[]::new));
            assertThat(restored.code()).as(restored.out() + restored.err()).isZero();
            assertThat(restored.out()).contains("snapshots in it: 4").doesNotContain("WARNING").contains("result: restored");

            try (ConfigurableApplicationContext b = start(newData, props);
                 AgentDriver agent = new AgentDriver(b.getBean(IngestServer.class).port(), TestTokens.issue(b, Role.AGENT))) {
                agent.hello();
                for (int v = 0; v < VOLUMES.size(); v++) {
                    for (int g = 1; g <= 2; g++) {
                        assertThat(agent.restore(VOLUMES.get(v), g).image()).as(VOLUMES.get(v) + "@" + g).isEqualTo(image(v, g));
                    }
                }
                JsonNode fsck = job(b, "/api/v1/gc/fsck", Role.OPERATOR);
                assertThat(fsck.get("clean").asBoolean()).as(fsck.toString()).isTrue();
            }
        }
    }

    /**
     * The copy of the data logs lacks one the backup names (the drill's BUG B): the tool used to count
     * its blocks lost and mark none, so the volumes were not flagged, the server answered incremental
     * on top of the damaged snapshot and each new snapshot inherited the hole. Now the tool marks them
     * bad and flags the snapshots, the next backup of each volume is turned full and repairs them, and
     * every snapshot restores byte-identical.
     */
    @Test
    void restore_localBackend_aDataLogMissing_blocksMarkedBad_nextBackupFull_everySnapshotRestores() throws Exception {
        Path oldData = dir.resolve("old");
        Path backups = dir.resolve("catalog-backups");
        int lostLog;
        long lostBlocks;
        try (ConfigurableApplicationContext a = start(oldData, Map.of("holdfast.catalog.backup.directory", backups.toString()))) {
            backUp(a, 1);
            JsonNode made = job(a, "/api/v1/catalog/backups", Role.ADMIN);
            assertThat(made.get("snapshots").asLong()).isEqualTo(2);
            Map<Integer, Long> perLog = new HashMap<>();
            a.getBean(DataStore.class).locations().forEach((pbn, logId, offset, len, fps, fpOff) -> {
                perLog.merge(logId, 1L, Long::sum);
                return true;
            });
            lostLog = perLog.keySet().stream().min(Integer::compare).orElseThrow();
            lostBlocks = perLog.get(lostLog);
            assertThat(perLog).as("64 KiB logs rolled").hasSizeGreaterThan(1);
        }
        Path newData = dir.resolve("new");
        Files.createDirectories(newData.resolve("data"));
        for (int id : logIds(oldData.resolve("data"))) {
            if (id != lostLog) {
                String name = String.format("log-%08x.hfl", id);
                Files.copy(oldData.resolve("data").resolve(name), newData.resolve("data").resolve(name));
            }
        }
        Tool restored = restoreTool("--data-dir", newData.toString(), "--from", backups.toString());
        assertThat(restored.code()).as(restored.out() + restored.err()).isZero();
        assertThat(restored.out()).contains("WARNING: " + lostBlocks + " blocks the backup names are gone")
                .contains("marked " + lostBlocks + " of them bad").contains("are flagged damaged")
                .contains("turns each one's next backup full").contains("result: restored");

        try (ConfigurableApplicationContext b = start(newData, Map.of())) {
            DataStore store = b.getBean(DataStore.class);
            assertThat((long) store.badBlocks().count()).as("marked by the restore").isEqualTo(lostBlocks);
            List<String> damaged = b.getBean(DamageReport.class).damagedVolumes().stream().map(DamageReport.VolumeDamage::volume).toList();
            assertThat(damaged).as("flagged right after the restore, before any verify").isNotEmpty();
            try (AgentDriver agent = new AgentDriver(b.getBean(IngestServer.class).port(), TestTokens.issue(b, Role.AGENT))) {
                agent.hello();
                long sent = 0;
                long[] after = new long[VOLUMES.size()];
                for (int v = 0; v < VOLUMES.size(); v++) {
                    AgentDriver.Backup next = agent.backupFromState(VOLUMES.get(v), image(v, 1), BS, 1, 0);
                    after[v] = next.committed().sequence(); // past the restore's sequence gap, not 2
                    assertThat(next.ready().mode()).as(VOLUMES.get(v) + ": the server turns the backup of a damaged volume full")
                            .isEqualTo(damaged.contains(VOLUMES.get(v)) ? BackupMode.FULL : BackupMode.INCREMENTAL);
                    sent += next.committed().sentBlocks();
                }
                assertThat(sent).as("only the lost blocks are uploaded again").isEqualTo(lostBlocks);
                assertThat(store.badBlocks().isEmpty()).as("left: %s", store.badBlocks().all()).isTrue();
                for (int v = 0; v < VOLUMES.size(); v++) {
                    for (long g : new long[] {1, after[v]}) {
                        assertThat(agent.restore(VOLUMES.get(v), g).image()).as(VOLUMES.get(v) + "@" + g).isEqualTo(image(v, 1));
                    }
                }
            }
            assertThat(b.getBean(DamageReport.class).damagedVolumes()).isEmpty();
        }
    }

    private void scenario(S3ProxyFixture s3) throws Exception {
        Path oldData = dir.resolve("old");
        Path backups = dir.resolve("catalog-backups");
        Map<String, String> props = new HashMap<>();
        if (s3 != null) {
            props.putAll(Map.of("holdfast.store.backend", "s3", "holdfast.store.s3.endpoint", s3.endpoint().toString(),
                    "holdfast.store.s3.bucket", s3.bucket(), "holdfast.store.s3.prefix", s3.prefix("restore/"),
                    "holdfast.store.s3.credentials-file", s3.settings("").credentialsFile().toString()));
        }
        Map<String, String> withBackups = new HashMap<>(props);
        withBackups.put("holdfast.catalog.backup.directory", backups.toString());

        long oldMaxPbn;
        int oldMaxLog;
        long oldMaxArchivedPbn;
        int oldMaxArchivedLog = 0;
        try (ConfigurableApplicationContext a = start(oldData, withBackups)) {
            backUp(a, 1);
            backUp(a, 2);
            JsonNode made = job(a, "/api/v1/catalog/backups", Role.ADMIN);
            assertThat(made.get("snapshots").asLong()).isEqualTo(4);
            backUp(a, 3);
            backUp(a, 4);

            // refused while the server runs: exit 3, and its catalog stays as it is
            Tool busy = restoreTool("--data-dir", oldData.toString(), "--from", backups.toString());
            assertThat(busy.code()).as(busy.err()).isEqualTo(3);
            assertThat(busy.err()).contains("in use");
            try (Stream<Path> s = Files.list(oldData)) {
                assertThat(s.map(p -> p.getFileName().toString())).noneMatch(n -> n.startsWith("catalog.before-restore"));
            }

            DataStore store = a.getBean(DataStore.class);
            AtomicLong max = new AtomicLong();
            AtomicLong maxArchived = new AtomicLong();
            LogArchive archive = store.archive();
            if (archive != null) {
                archive.awaitUploads(60_000);
            }
            store.locations().forEach((pbn, logId, offset, len, fps, fpOff) -> {
                max.accumulateAndGet(pbn, Math::max);
                if (archive != null && archive.isUploaded(logId)) {
                    maxArchived.accumulateAndGet(pbn, Math::max);
                }
                return true;
            });
            oldMaxPbn = max.get();
            oldMaxArchivedPbn = maxArchived.get();
            for (int id = 1; archive != null && id <= store.stats().activeLogId(); id++) {
                if (archive.isUploaded(id)) {
                    oldMaxArchivedLog = id;
                }
            }
        }
        oldMaxLog = logIds(oldData.resolve("data")).get(logIds(oldData.resolve("data")).size() - 1);
        assertThat(oldMaxLog).as("64 KiB logs rolled over four generations").isGreaterThan(4);

        // the disk is lost: a new data directory; with backend local the data logs come from their copy
        Path newData = dir.resolve("new");
        if (s3 == null) {
            Files.createDirectories(newData.resolve("data"));
            for (int id : logIds(oldData.resolve("data"))) {
                String name = String.format("log-%08x.hfl", id);
                Files.copy(oldData.resolve("data").resolve(name), newData.resolve("data").resolve(name));
            }
        }
        List<String> s3Args = new ArrayList<>();
        props.forEach((k, v) -> s3Args.add("--" + k + "=" + v));

        // a bad backup id is a clear error and changes nothing
        List<String> bad = new ArrayList<>(List.of("--data-dir", newData.toString(), "--from", backups.toString(), "--backup-id", "7"));
        bad.addAll(s3Args);
        Tool unknown = restoreTool(bad.toArray(String[]::new));
        assertThat(unknown.code()).isEqualTo(2);
        assertThat(unknown.err()).contains("no catalog backup 7").contains("[1]").contains("nothing was changed");
        assertThat(newData.resolve("catalog")).doesNotExist();
        Tool notBackups = restoreTool("--data-dir", newData.toString(), "--from", dir.toString());
        assertThat(notBackups.code()).isEqualTo(2);
        assertThat(notBackups.err()).contains("holds no catalog backups");

        List<String> args = new ArrayList<>(List.of("--data-dir", newData.toString(), "--from", backups.toString()));
        args.addAll(s3Args);
        Tool restored = restoreTool(args.toArray(String[]::new));
        assertThat(restored.code()).as(restored.out() + restored.err()).isZero();
        assertThat(restored.out()).contains("snapshots in it: 4").contains("LOST: every snapshot committed after")
                .contains("GC metadata rebuilt").contains("result: restored").doesNotContain("WARNING")
                .contains("a token revoked after the backup is valid again")
                .contains("POST /api/v1/gc/fsck").doesNotContain("start the server, then check it: holdfast-server fsck");
        assertThat(newData.resolve("gc")).isDirectory();
        if (s3 != null) {
            assertThat(oldMaxArchivedLog).as("64 KiB logs rolled and were uploaded").isGreaterThan(4);
            assertThat(restored.out()).containsPattern("[1-9][0-9]* uploads confirmed from the bucket");
        }

        int logFloor = s3 == null ? oldMaxLog : oldMaxArchivedLog; // the highest log id the new server can see
        try (ConfigurableApplicationContext b = start(newData, props)) {
            DataStore store = b.getBean(DataStore.class);
            long firstNew = store.nextPbn();
            assertThat(firstNew).as("no PBN of a lost snapshot is handed out again").isGreaterThan(oldMaxPbn);
            assertThat(store.stats().activeLogId()).as("no log id is reused").isGreaterThan(logFloor);
            if (s3 != null) {
                assertThat(firstNew).isGreaterThan(oldMaxArchivedPbn);
            }
            try (AgentDriver agent = new AgentDriver(b.getBean(IngestServer.class).port(), TestTokens.issue(b, Role.AGENT))) {
                agent.hello();
                for (int v = 0; v < VOLUMES.size(); v++) {
                    List<SnapshotInfo> listed = agent.list(VOLUMES.get(v)).snapshots();
                    assertThat(listed).extracting(SnapshotInfo::sequence).as("generations 3 and 4 came after the backup")
                            .containsExactly(1L, 2L);
                    for (int g = 1; g <= 2; g++) {
                        assertThat(agent.restore(VOLUMES.get(v), g).image()).as(VOLUMES.get(v) + "@" + g).isEqualTo(image(v, g));
                    }
                }
            }
            JsonNode fsck = job(b, "/api/v1/gc/fsck", Role.OPERATOR);
            assertThat(fsck.get("clean").asBoolean()).as(fsck.toString()).isTrue();

            // backups go on: a new generation stores above the old maxima and restores byte-identical
            byte[] fresh = image(7, 9);
            try (AgentDriver agent = new AgentDriver(b.getBean(IngestServer.class).port(), TestTokens.issue(b, Role.AGENT))) {
                agent.hello();
                // cr-a@3 and @4 were lost with the restore: their ids are not handed out again (2 + the default gap of 1000)
                assertThat(agent.backup("cr-a", fresh, BS, true).sequence()).isEqualTo(2 + 1000 + 1);
                assertThat(agent.restore("cr-a", 1003).image()).isEqualTo(fresh);
            }
            AtomicLong newBlocks = new AtomicLong();
            store.locations().forEach((pbn, logId, offset, len, fps, fpOff) -> {
                if (pbn >= firstNew) {
                    newBlocks.incrementAndGet();
                    assertThat(logId).as("new blocks go to new logs").isGreaterThan(logFloor);
                }
                return true;
            });
            assertThat(newBlocks.get()).isPositive();
            JsonNode again = job(b, "/api/v1/gc/fsck", Role.OPERATOR);
            assertThat(again.get("clean").asBoolean()).as(again.toString()).isTrue();

            // this server has no backup directory: the calls say which setting to set
            HttpResponse<String> off = RestCalls.call(http, port(b), "GET", "/api/v1/catalog/backups", null, TestTokens.issue(b, Role.ADMIN));
            assertThat(off.statusCode()).isEqualTo(409);
            assertThat(off.body()).contains("catalog-backup-off").contains("holdfast.catalog.backup.directory");
        }
        if (s3 == null) {
            // restoring again over a catalog that went on: it is moved aside, never deleted, and the ids still climb
            List<Integer> logsBefore = logIds(newData.resolve("data"));
            Tool twice = restoreTool(args.toArray(String[]::new));
            assertThat(twice.code()).as(twice.out() + twice.err()).isZero();
            assertThat(twice.out()).contains("the catalog that was here is kept as");
            try (Stream<Path> s = Files.list(newData)) {
                Path aside = s.filter(p -> p.getFileName().toString().startsWith("catalog.before-restore-")).findFirst().orElseThrow();
                try (Stream<Path> files = Files.list(aside)) {
                    assertThat(files.map(p -> p.getFileName().toString())).anyMatch(n -> n.endsWith(".sst"));
                }
            }
            try (ConfigurableApplicationContext c = start(newData, props);
                 AgentDriver agent = new AgentDriver(c.getBean(IngestServer.class).port(), TestTokens.issue(c, Role.AGENT))) {
                assertThat(c.getBean(DataStore.class).stats().activeLogId()).isGreaterThan(logsBefore.get(logsBefore.size() - 1));
                agent.hello();
                assertThat(agent.list("cr-a").snapshots()).extracting(SnapshotInfo::sequence).containsExactly(1L, 2L);
                assertThat(agent.restore("cr-b", 2).image()).isEqualTo(image(1, 2));
            }
        }
    }

    @Test
    void run_badArguments_exit2_andNothingIsMade() {
        Path data = dir.resolve("never");
        assertThat(restoreTool("--data-dir", data.toString()).err()).contains("missing required option", "--from");
        Tool badId = restoreTool("--data-dir", data.toString(), "--from", dir.toString(), "--backup-id", "latest");
        assertThat(badId.code()).isEqualTo(2);
        assertThat(badId.err()).contains("--backup-id", "a backup id is a positive number");
        assertThat(restoreTool("--data-dir", data.toString(), "--from", dir.toString(), "--bogus").code()).isEqualTo(2);
        assertThat(data).doesNotExist();
    }

    @Test
    void start_backupDirectoryInsideTheDataDirectory_refusedWithTheReason() {
        Path data = dir.resolve("d");
        assertThatThrownBy(() -> start(data, Map.of("holdfast.catalog.backup.directory", data.resolve("catalog-backups").toString())))
                .hasStackTraceContaining("inside the data directory").hasStackTraceContaining("another disk");
        assertThatThrownBy(() -> start(data, Map.of("holdfast.catalog.backup.directory", "")))
                .hasStackTraceContaining("holdfast.catalog.backup.directory is set but empty");
    }
}
