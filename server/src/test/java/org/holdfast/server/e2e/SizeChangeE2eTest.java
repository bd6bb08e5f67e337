package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Random;
import java.util.stream.Stream;
import org.holdfast.client.cli.HoldfastAgent;
import org.holdfast.server.ingest.IngestHarness;
import org.holdfast.server.ingest.TestTokens;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent's size-change warning against a real ingest server when no state file describes the
 * parent: the agent lists the volume's snapshots on the same connection after COMMITTED (an agent
 * token may), and the server answers on that idle connection.
 */
class SizeChangeE2eTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;
    private IngestHarness server;

    @BeforeEach
    void start() {
        server = new IngestHarness(dir.resolve("server"));
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private static Path image(Path file, int bytes, long seed) throws Exception {
        byte[] v = new byte[bytes];
        new Random(seed).nextBytes(v);
        return Files.write(file, v);
    }

    private record Run(int exit, String out, String err) {
    }

    private Run backup(Path source) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = HoldfastAgent.run(new String[] {"backup", "--server", "127.0.0.1:" + server.port(), "--no-tls", "--no-daemon",
                "--token", TestTokens.DEFAULT_AGENT, "--volume", "vm1", "--json", "--source", source.toString(),
                "--state-dir", dir.resolve("state").toString()},
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private void wipeState() throws Exception {
        try (Stream<Path> walk = Files.walk(dir.resolve("state"))) {
            for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    @Test
    void backup_noStateFile_sourceOfAnotherSize_warnsFromTheServersListing() throws Exception {
        Path small = image(dir.resolve("small.img"), 64 * 1024, 1);
        Path large = image(dir.resolve("large.img"), 96 * 1024, 2);
        assertThat(backup(small).exit()).isZero();
        wipeState(); // a new host, or a wiped --state-dir

        Run r = backup(large);

        assertThat(r.exit()).as("%s", r).isZero();
        assertThat(r.err()).contains("warning: volume vm1 was 64.0 KiB at snapshot vm1@1").doesNotContain("could not compare");
        JsonNode change = JSON.readTree(r.out().strip()).get("sizeChange");
        assertThat(change.get("fromSequence").asLong()).isEqualTo(1);
        assertThat(change.get("toBytes").asLong()).isEqualTo(96 * 1024);

        wipeState();
        Run same = backup(large);
        assertThat(same.exit()).as("%s", same).isZero();
        assertThat(same.err()).doesNotContain("warning").doesNotContain("could not compare");
    }
}
