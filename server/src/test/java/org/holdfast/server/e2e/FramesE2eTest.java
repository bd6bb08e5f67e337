package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.holdfast.client.cli.HoldfastAgent;
import org.holdfast.server.ingest.IngestHarness;
import org.holdfast.server.ingest.TestTokens;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real agent (CLI, scan, upload, restore) against a real ingest server with its real store,
 * both in this JVM: a protocol 4 agent sends compressed frames and restores byte-identical; an
 * agent that offers protocol 3 sends single blocks to the same server and restores as well; an
 * agent without a state file takes the parent's size for its size-change warning from the server.
 */
class FramesE2eTest {
    private static final int BS = 4096;
    private static final int BLOCKS = 2048;
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private IngestHarness server;

    /** 300 made-up words: text whose repeats reach across blocks, as in real files. */
    private static final byte[][] WORDS = new byte[300][];

    static {
        Random r = new Random(99);
        for (int k = 0; k < WORDS.length; k++) {
            StringBuilder w = new StringBuilder();
            for (int c = 2 + r.nextInt(8); c > 0; c--) {
                w.append((char) ('a' + r.nextInt(26)));
            }
            WORDS[k] = (w + (k % 11 == 0 ? ".\n" : " ")).getBytes(StandardCharsets.US_ASCII);
        }
    }

    @BeforeEach
    void start() {
        server = new IngestHarness(dir.resolve("server"));
    }

    @AfterEach
    void stop() {
        server.close();
    }

    /**
     * A mix in regions of 32 blocks, as files lie on a file system: text-like, random
     * (incompressible) and zero regions, and a few repeated blocks. (Random blocks strewn one in five
     * among text make a frame lose to single blocks: zstd then codes the text with literal tables
     * fitted to random bytes. docs/benchmarks.md, "Compressed frame size".)
     */
    private static Path image(Path file, long seed) throws Exception {
        byte[] v = new byte[BLOCKS * BS];
        Random r = new Random(seed);
        for (int lbn = 0; lbn < BLOCKS; lbn++) {
            int off = lbn * BS;
            int region = lbn / 32;
            int kind = region % 8 == 7 ? 0 : region % 4 == 1 ? 1 : lbn % 97 == 50 ? 3 : 2;
            switch (kind) {
                case 1 -> {
                    byte[] b = new byte[BS];
                    r.nextBytes(b);
                    System.arraycopy(b, 0, v, off, BS);
                }
                case 2 -> {
                    for (int i = 0; i < BS; ) {
                        byte[] w = WORDS[r.nextInt(WORDS.length)];
                        int n = Math.min(w.length, BS - i);
                        System.arraycopy(w, 0, v, off + i, n);
                        i += n;
                    }
                }
                case 3 -> System.arraycopy(v, off - 3 * BS, v, off, BS);
                default -> {
                    // zero
                }
            }
        }
        Files.write(file, v);
        return file;
    }

    private record Run(int exit, String out, String err) {
        JsonNode json() throws Exception {
            return JSON.readTree(out.strip());
        }
    }

    private Run agent(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = HoldfastAgent.run(args, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private List<String> common(String command, String volume) {
        return new ArrayList<>(List.of(command, "--server", "127.0.0.1:" + server.port(), "--no-tls", "--no-daemon",
                "--token", TestTokens.DEFAULT_AGENT, "--volume", volume, "--json"));
    }

    private Run backup(String volume, Path source, String... extra) {
        List<String> a = common("backup", volume);
        a.addAll(List.of("--source", source.toString(), "--state-dir", dir.resolve("state").toString()));
        a.addAll(List.of(extra));
        return agent(a.toArray(String[]::new));
    }

    private Run restore(String volume, Path target, String... extra) {
        List<String> a = common("restore", volume);
        a.addAll(List.of("--snapshot", "latest", "--target", target.toString()));
        a.addAll(List.of(extra));
        return agent(a.toArray(String[]::new));
    }

    @Test
    void version4Agent_sendsFrames_andRestoresByteIdentical() throws Exception {
        Path src = image(dir.resolve("a.img"), 1);
        Run b = backup("framed", src, "--frame-size", "65536");
        assertThat(b.exit()).as("%s", b).isZero();
        JsonNode j = b.json();
        assertThat(j.get("framedBlocks").asLong()).as("text blocks travel in frames").isGreaterThan(BLOCKS / 2);
        assertThat(j.get("storedBytes").asLong()).isLessThan(j.get("sentBlocks").asLong() * BS);

        Path out = dir.resolve("a.out");
        Run r = restore("framed", out);
        assertThat(r.exit()).as("%s", r).isZero();
        assertThat(Files.mismatch(src, out)).as("restored byte-identical").isEqualTo(-1L);

        // an incremental: scattered changed blocks (runs of 1 to 3) travel in frames of their runs
        try (java.nio.channels.FileChannel ch = java.nio.channels.FileChannel.open(src, java.nio.file.StandardOpenOption.WRITE)) {
            Random rnd = new Random(11);
            for (int k = 0; k < 60; k++) {
                byte[] changed = new byte[BS * (1 + rnd.nextInt(3))];
                for (int i = 0; i < changed.length; i++) {
                    changed[i] = WORDS[rnd.nextInt(WORDS.length)][0];
                }
                ch.write(java.nio.ByteBuffer.wrap(changed), (long) rnd.nextInt(BLOCKS - 3) * BS);
            }
        }
        Run inc = backup("framed", src, "--frame-size", "65536");
        assertThat(inc.exit()).as("%s", inc).isZero();
        assertThat(inc.json().get("mode").asText()).isEqualTo("incremental");
        assertThat(inc.json().get("framedBlocks").asLong()).isPositive();
        Files.delete(out);
        Run r2 = restore("framed", out);
        assertThat(r2.exit()).as("%s", r2).isZero();
        assertThat(Files.mismatch(src, out)).as("the incremental restores byte-identical").isEqualTo(-1L);
    }

    @Test
    void version3Agent_sendsSingleBlocksToTheNewServer_andRestores() throws Exception {
        Path src = image(dir.resolve("b.img"), 2);
        Run b = backup("old", src, "--protocol-version", "3");
        assertThat(b.exit()).as("%s", b).isZero();
        assertThat(b.json().get("framedBlocks").asLong()).isZero();
        assertThat(b.json().get("sentBlocks").asLong()).isPositive();

        Path out = dir.resolve("b.out");
        Run r = restore("old", out, "--protocol-version", "3");
        assertThat(r.exit()).as("%s", r).isZero();
        assertThat(Files.mismatch(src, out)).isEqualTo(-1L);

        // the same mix from a version 4 agent stores less: frames compress better than single blocks
        Path src2 = image(dir.resolve("c.img"), 3);
        Run framed = backup("new", src2);
        assertThat(framed.exit()).as("%s", framed).isZero();
        assertThat(framed.json().get("storedBytes").asLong()).isLessThan(b.json().get("storedBytes").asLong());
    }

    @Test
    void noStateFile_sourceOfAnotherSize_warnsFromTheServersListingAfterCommitted() throws Exception {
        // the agent lists the volume's snapshots on the same connection after COMMITTED (an agent token may)
        byte[] v = new byte[96 * 1024];
        new Random(7).nextBytes(v);
        Path small = Files.write(dir.resolve("small.img"), java.util.Arrays.copyOf(v, 64 * 1024));
        Path large = Files.write(dir.resolve("large.img"), v);
        assertThat(backup("resized", small).exit()).isZero();
        wipeState(); // a new host, or a wiped --state-dir

        Run r = backup("resized", large);

        assertThat(r.exit()).as("%s", r).isZero();
        assertThat(r.err()).contains("warning: volume resized was 64.0 KiB at snapshot resized@1").doesNotContain("could not compare");
        assertThat(r.json().get("sizeChange").get("fromSequence").asLong()).isEqualTo(1);
        assertThat(r.json().get("sizeChange").get("toBytes").asLong()).isEqualTo(96 * 1024);

        wipeState();
        Run same = backup("resized", large);
        assertThat(same.exit()).as("%s", same).isZero();
        assertThat(same.err()).doesNotContain("warning").doesNotContain("could not compare");
    }

    private void wipeState() throws Exception {
        try (java.util.stream.Stream<Path> walk = Files.walk(dir.resolve("state"))) {
            for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
