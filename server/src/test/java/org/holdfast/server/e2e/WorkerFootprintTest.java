package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.holdfast.common.ports.TestPorts;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A worker's footprint after start (issue 18): a real worker process with the default engine sizes,
 * its master not reachable yet (it keeps retrying), measured once healthy: heap in use after a full
 * GC ({@code jcmd GC.run}, {@code GC.heap_info}) and RSS. A worker opens only its own dedup index,
 * lazily at the master's first call; the standalone engine (SFI, Bloom filter chain) is not opened,
 * so neither its heap nor its files are there. Prints the figures (docs/benchmarks.md,
 * "Master/worker dedup").
 */
class WorkerFootprintTest {
    private static final long MIB = 1 << 20;
    /**
     * Bound on the heap in use after start. The default standalone engine alone holds its 64 MB SFI
     * and a Bloom filter chain of 9 periods; a worker without it measures about 40 MiB (Spring, Tomcat,
     * RocksDB's catalog handle).
     */
    private static final long MAX_USED_HEAP = 56 * MIB;

    private final LogDir logs = new LogDir("WorkerFootprintTest");

    @TempDir
    Path work;

    @Test
    void worker_afterStart_holdsNoStandaloneEngine() throws Exception {
        Path tokenFile = Files.writeString(work.resolve("worker.token"), "hf_not_checked_until_the_master_answers\n");
        Map<String, String> p = Map.of("holdfast.cluster.role", "worker", "holdfast.cluster.host", "127.0.0.1",
                "holdfast.cluster.master", "127.0.0.1:" + TestPorts.claim(), // nobody listens: the worker retries
                "holdfast.cluster.token-file", tokenFile.toString(), "holdfast.store.s3.node", "footprint-1",
                "holdfast.tls.enabled", "false");
        try (ServerProcess worker = ServerProcess.startWithHeap(work.resolve("worker"), "sungem", p, logs, "512m")) {
            long pid = worker.process().pid();
            jcmd(pid, "GC.run");
            long used = usedHeapKib(jcmd(pid, "GC.heap_info")) * 1024;
            long rss = rssKib(pid) * 1024;
            System.out.printf("[footprint] worker after start, default engine sizes, -Xmx512m -XX:+UseSerialGC:"
                    + " heap used after full GC %.1f MiB, RSS %.1f MiB%n", used / (double) MIB, rss / (double) MIB);
            Path data = worker.dataDir();
            for (String standalone : List.of("sungem", "containers", "gc", "data", "session-spill")) {
                assertThat(data.resolve(standalone)).as("standalone %s in the worker's data directory", standalone).doesNotExist();
            }
            assertThat(used).as("heap in use after start").isLessThan(MAX_USED_HEAP);
        }
    }

    private static String jcmd(long pid, String command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("jcmd", Long.toString(pid), command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as("jcmd %s: %s", command, out).isZero();
        return out;
    }

    /** Serial GC's heap_info: "def new generation total 1234K, used 567K" and "tenured generation total ..., used ...". */
    static long usedHeapKib(String heapInfo) {
        Matcher m = Pattern.compile("generation\\s+total \\d+K, used (\\d+)K").matcher(heapInfo);
        long used = 0;
        int found = 0;
        while (m.find()) {
            used += Long.parseLong(m.group(1));
            found++;
        }
        assertThat(found).as("generations in %s", heapInfo).isGreaterThanOrEqualTo(2);
        return used;
    }

    private static long rssKib(long pid) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        throw new AssertionError("no VmRSS in /proc/" + pid + "/status");
    }
}
