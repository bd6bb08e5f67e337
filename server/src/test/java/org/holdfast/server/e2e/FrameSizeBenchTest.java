package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.holdfast.server.ingest.IngestHarness;
import org.holdfast.server.ingest.TestTokens;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The figures behind the default {@code --frame-size} (docs/benchmarks.md, "Compressed frame
 * size"): a first backup of one image by the real agent process (-Xmx256m) into a fresh in-process
 * ingest server, once per frame size and once as a protocol 3 agent (one block at a time).
 * Prints the agent's CPU (all threads, and its compressing threads alone, sampled from /proc) and
 * the bytes the server would store. Runs only with {@code -Dholdfast.frames.image=FILE}.
 */
@Tag("slow")
class FrameSizeBenchTest {
    private static final LogDir logs = new LogDir("FrameSizeBenchTest");

    @TempDir
    Path dir;

    /** utime + stime of a process ({@code tid} null) or of its threads whose name starts with {@code prefix}, in clock ticks. */
    static long ticks(long pid, String prefix) {
        try {
            if (prefix == null) {
                return ticksOf(Path.of("/proc", Long.toString(pid), "stat"));
            }
            long sum = 0;
            try (Stream<Path> tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
                for (Path t : tasks.toList()) {
                    if (Files.readString(t.resolve("comm")).startsWith(prefix)) {
                        sum += ticksOf(t.resolve("stat"));
                    }
                }
            }
            return sum;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    private static long ticksOf(Path stat) throws IOException {
        String s = Files.readString(stat);
        String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(f[11]) + Long.parseLong(f[12]); // fields 14 and 15 of stat(5)
    }

    @Test
    void frameSizes_agentCpuAndStoredBytes() throws Exception {
        String image = System.getProperty("holdfast.frames.image");
        assumeTrue(image != null, "set -Dholdfast.frames.image=FILE to run the frame size figures");
        Path src = Path.of(image);
        AgentProcess agent = new AgentProcess(logs);
        List<String> rows = new ArrayList<>();
        String[][] runs = {{"protocol 3 (per block)", "--protocol-version", "3"}, {"64 KiB", "--frame-size", "65536"},
                {"256 KiB", "--frame-size", "262144"}, {"1 MiB", "--frame-size", "1048576"}};
        int repeats = Integer.getInteger("holdfast.frames.repeats", 1);
        for (int rep = 0; rep < repeats; rep++) {
            for (String[] run : runs) {
                Path work = Files.createTempDirectory(dir, "run");
                try (IngestHarness server = new IngestHarness(work.resolve("server"))) {
                    List<String> a = new ArrayList<>(List.of("backup", "--server", "127.0.0.1:" + server.port(), "--no-tls",
                            "--no-daemon", "--token", TestTokens.DEFAULT_AGENT, "--volume", "bench", "--source", src.toString(),
                            "--state-dir", work.resolve("state").toString(), "--json", run[1], run[2]));
                    AgentProcess.Running r = agent.start(a.toArray(String[]::new));
                    long total = 0;
                    long compress = 0;
                    while (r.isAlive()) {
                        long t = ticks(r.pid(), null);
                        long c = ticks(r.pid(), "holdfast-compre");
                        if (t >= 0) {
                            total = t;
                            compress = Math.max(compress, c);
                        }
                        Thread.sleep(20);
                    }
                    AgentResult res = r.await();
                    assertThat(res.exitCode()).as("%s", res).isZero();
                    JsonNode j = AgentProcess.json(res);
                    if (!run[1].equals("--protocol-version")) {
                        assertThat(j.get("framedBlocks").asLong()).isPositive();
                    }
                    long logical = j.get("sentBlocks").asLong() * j.get("blockSize").asLong();
                    rows.add(String.format("| %s | %.2f | %.2f | %d | %d | %.3f | %d |", run[0], total / 100.0, compress / 100.0,
                            j.get("sentBlocks").asLong(), j.get("storedBytes").asLong(),
                            (double) logical / j.get("storedBytes").asLong(), j.get("framedBlocks").asLong()));
                }
            }
        }
        System.out.println("| frames | agent CPU-s | compressing threads CPU-s | sent blocks | stored bytes | sent/stored | framed blocks |");
        System.out.println("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
        rows.forEach(System.out::println);
    }
}
