package org.holdfast.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.holdfast.common.protocol.BackupMode;
import org.holdfast.server.app.CatalogRestoreTool;
import org.holdfast.server.app.HoldfastServer;
import org.holdfast.server.ingest.AgentDriver;
import org.holdfast.server.ingest.IngestServer;
import org.holdfast.server.security.Role;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The DR drill's finding, on real in-process servers and a real catalog restore: before sequence
 * floors the server handed out a lost sequence again, to whichever agent backed up first. Now the
 * restore leaves a gap ({@code --sequence-gap}); with the gap 0 the old case comes back, and the
 * agent whose state describes the lost snapshot of that number must then get a full backup (its
 * snapshot identity differs), not an incremental one on top of the other agent's snapshot, which
 * would restore as a mix of both volumes.
 */
class CatalogRestoreIdentityTest {
    private static final int BS = 4096;
    private static final int BLOCKS = 32;
    private static final String VOLUME = "drill";

    @TempDir
    Path dir;

    private final HttpClient http = HttpClient.newHttpClient();

    private static ConfigurableApplicationContext start(Path data, Path backups) {
        List<String> args = new ArrayList<>(List.of("--holdfast.data-dir=" + data, "--server.port=0", "--server.address=127.0.0.1",
                "--holdfast.tls.enabled=false", "--holdfast.ingest.host=127.0.0.1", "--holdfast.ingest.port=0",
                "--holdfast.store.min-free-space=0", "--holdfast.verify.schedule=0", "--spring.main.banner-mode=off"));
        if (backups != null) {
            args.add("--holdfast.catalog.backup.directory=" + backups);
        }
        return new SpringApplicationBuilder(HoldfastServer.class).run(args.toArray(String[]::new));
    }

    private static AgentDriver agent(ConfigurableApplicationContext ctx) {
        AgentDriver a = new AgentDriver(ctx.getBean(IngestServer.class).port(), TestTokens.issue(ctx, Role.AGENT));
        a.hello();
        return a;
    }

    private static byte[] random(long seed) {
        byte[] img = new byte[BLOCKS * BS];
        new Random(seed).nextBytes(img);
        return img;
    }

    /** {@code base} with the given LBNs overwritten by new random blocks. */
    private static byte[] changed(byte[] base, long seed, long... lbns) {
        byte[] img = base.clone();
        Random r = new Random(seed);
        for (long lbn : lbns) {
            byte[] block = new byte[BS];
            r.nextBytes(block);
            System.arraycopy(block, 0, img, (int) lbn * BS, BS);
        }
        return img;
    }

    @Test
    void backup_afterCatalogRestore_stateOfTheLostSnapshotWithItsSequenceHandedOutAgain_fullAndRestoresByteIdentical() throws Exception {
        Path oldData = dir.resolve("old");
        Path backups = dir.resolve("catalog-backups");
        byte[] a0 = random(1);
        byte[] a1 = changed(a0, 2, 3, 4);
        long stateSequence;
        long stateId;
        try (ConfigurableApplicationContext s = start(oldData, backups)) {
            try (AgentDriver a = agent(s)) {
                long firstId = a.backup(VOLUME, a0, BS, true).snapshotId();
                String token = TestTokens.issue(s, Role.ADMIN);
                HttpResponse<String> r = RestCalls.call(http, Integer.parseInt(s.getEnvironment().getProperty("local.server.port")),
                        "POST", "/api/v1/catalog/backups", null, token);
                assertThat(r.statusCode()).as(r.body()).isEqualTo(202);
                JsonNode made = JobPolling.awaitResult(p -> RestCalls.call(http,
                        Integer.parseInt(s.getEnvironment().getProperty("local.server.port")), "GET", p, null, token).body(),
                        r.headers().firstValue("Location").orElseThrow());
                assertThat(made.get("snapshots").asLong()).isEqualTo(1);
                // agent A's state now describes drill@2, a snapshot the catalog backup does not hold
                AgentDriver.Backup second = a.backupFromState(VOLUME, a1, BS, 1, firstId, 3, 4);
                assertThat(second.ready().mode()).isEqualTo(BackupMode.INCREMENTAL);
                stateSequence = second.committed().sequence();
                stateId = second.committed().snapshotId();
            }
        }
        assertThat(stateSequence).isEqualTo(2);

        // the disk is lost; the data logs survive (copied), the catalog comes from its backup
        Path newData = dir.resolve("new");
        Files.createDirectories(newData.resolve("data"));
        try (Stream<Path> logs = Files.list(oldData.resolve("data"))) {
            for (Path log : logs.filter(p -> p.getFileName().toString().matches("log-[0-9a-f]{8}\\.hfl")).toList()) {
                Files.copy(log, newData.resolve("data").resolve(log.getFileName()));
            }
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int code = CatalogRestoreTool.run(new String[] {"--data-dir", newData.toString(), "--from", backups.toString(),
                    "--sequence-gap", "0"},
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(out, true, StandardCharsets.UTF_8), Clock.systemUTC());
        assertThat(code).as(out.toString(StandardCharsets.UTF_8)).isZero();

        byte[] b0 = random(99); // what agent B (another state dir, another view of the volume) reads
        byte[] a2 = changed(a1, 3, 7);
        try (ConfigurableApplicationContext s = start(newData, null)) {
            try (AgentDriver b = agent(s)) {
                AgentDriver.Backup byB = b.backupFromState(VOLUME, b0, BS, 0, 0);
                assertThat(byB.committed().sequence()).as("with --sequence-gap 0 the lost sequence is handed out again")
                        .isEqualTo(stateSequence);
                assertThat(byB.committed().snapshotId()).isNotEqualTo(stateId);
            }
            try (AgentDriver a = agent(s)) {
                // agent A's state says drill@2 with its own identity; it changed LBN 7 since
                AgentDriver.Backup third = a.backupFromState(VOLUME, a2, BS, stateSequence, stateId, 7);
                assertThat(third.ready().parentSequence()).isEqualTo(stateSequence);
                byte[] restored = a.restore(VOLUME, third.committed().sequence()).image();
                // compared as one boolean: a failure would otherwise print 128 KiB of bytes
                assertThat(java.util.Arrays.equals(restored, a2)).as("the new snapshot is agent A's volume, byte for byte").isTrue();
                assertThat(third.ready().mode()).as("drill@2 on the server is agent B's, not the one A's state describes")
                        .isEqualTo(BackupMode.FULL);
            }
        }
    }
}
