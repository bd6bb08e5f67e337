package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Comparator;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A volume whose per-block session state does not fit the server's heap under the old, unbounded
 * session: 1.5 M unique, highly compressible 512-byte blocks (768 MiB) backed up by the real agent
 * ({@code -Xmx256m}) to a real server at {@code -Xmx256m}, then restored byte-identical. The old
 * session held, before its commit, 78 bytes per changed block in arrays grown by doubling
 * (capacity 2^21: 163 MiB, 245 MiB while the last doubling copies), its request table (16 MiB)
 * and possession arrays (56 bytes a block: 117 MiB): more than the heap. Its commit then added the
 * map copy (24 MiB), the delta (48 MiB) and the GC bookkeeping's copies (112 MiB). A backup killed
 * midway leaves no spill file and nothing visible. Figures (peak RSS of both processes) go to
 * stdout for docs/benchmarks.md. {@code -Dholdfast.spill.blocks=N}, {@code
 * -Dholdfast.spill.server-heap=256m}, {@code -Dholdfast.spill.block-size=4096}, {@code
 * -Dholdfast.spill.dir=/mnt/big} and {@code -Dholdfast.spill.memory-entries=2147483647} (never
 * spill: the old behaviour) change the run.
 *
 * <p>The server's heap is 256m, as the agent's: the commit no longer holds O(changed blocks) either
 * (its delta spills, its map entries go in chunks, its GC bookkeeping in parts: docs/architecture.md,
 * "Memory of a session" and "Large commits"); at 1 M blocks and more it used to end in an
 * {@code OutOfMemoryError} at the commit.
 */
class SessionSpillE2eTest {
    private static final LogDir logs = new LogDir("SessionSpillE2eTest");
    // 512 B by default so that the volume and its restored copy fit a test machine's disk at 16 M blocks
    private static final int BS = Integer.getInteger("holdfast.spill.block-size", 512);
    private static final long DEFAULT_BLOCKS = 1_536L << 10;

    @TempDir
    Path tempDir;
    Path dir;

    /** Removes a directory made under {@code holdfast.spill.dir} (JUnit removes its own temporary directory). */
    @AfterEach
    void removeSpillDir() throws IOException {
        if (dir != null && !dir.equals(tempDir)) {
            try (Stream<Path> s = Files.walk(dir)) {
                for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
    }

    /** Block i holds i + 1 in its first 8 bytes and zeros after: unique, never zero, and compresses to a few bytes. */
    static void writeVolume(Path file, long blocks) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ByteBuffer buf = ByteBuffer.allocate(1 << 20);
            int perBuffer = buf.capacity() / BS;
            for (long i = 0; i < blocks; ) {
                buf.clear();
                for (int j = 0; j < buf.capacity(); j++) {
                    buf.put(j, (byte) 0);
                }
                int n = (int) Math.min(perBuffer, blocks - i);
                for (int j = 0; j < n; j++) {
                    buf.putLong(j * BS, i + j + 1);
                }
                buf.limit(n * BS);
                while (buf.hasRemaining()) {
                    ch.write(buf);
                }
                i += n;
            }
        }
    }

    /** VmHWM (peak resident set) of a live process in KiB, or -1 once it is gone. */
    static long peakRssKib(long pid) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
                if (line.startsWith("VmHWM:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", ""));
                }
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return -1;
    }

    /** Runs the agent to the end, sampling its peak RSS; returns {result, peak KiB}. */
    private static Object[] runSampled(AgentProcess agent, String... args) throws InterruptedException {
        AgentProcess.Running run = agent.start(args);
        long peak = 0;
        while (run.isAlive()) {
            peak = Math.max(peak, peakRssKib(run.pid()));
            Thread.sleep(100);
        }
        return new Object[] {run.await(), peak};
    }

    private static long count(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.count();
        }
    }

    @Test
    void volumeLargerThanTheOldSessionHeap_backsUpAndRestoresWithBothHeapsAtXmx256m() throws Exception {
        long blocks = Long.getLong("holdfast.spill.blocks", DEFAULT_BLOCKS);
        // -Dholdfast.spill.dir: a roomier (e.g. compressing) file system for the 64 GiB run
        String under = System.getProperty("holdfast.spill.dir");
        dir = under == null ? tempDir : Files.createTempDirectory(Path.of(under), "spill");
        Path volume = dir.resolve("volume.img");
        writeVolume(volume, blocks);
        // 768 MiB through both: the full JIT (the C1-only default of the process tests would triple the time)
        AgentProcess agent = new AgentProcess(logs, ChildJvm.FULL_JIT);
        // the engine's fixed-size caches made small enough for the heap: they do not grow with the volume
        Map<String, String> props = new java.util.LinkedHashMap<>(Map.of("holdfast.tls.enabled", "false",
                "holdfast.dedup.sungem.sfi-size", "16MB", "holdfast.dedup.sungem.container-cache-size", "32MB",
                "holdfast.dedup.sungem.bloom-expected-per-period", "1000000"));
        String memoryEntries = System.getProperty("holdfast.spill.memory-entries");
        if (memoryEntries != null) {
            props.put("holdfast.ingest.session-memory-entries", memoryEntries); // e.g. 2147483647: the old, unbounded session
        }
        String heap = System.getProperty("holdfast.spill.server-heap", "256m");
        try (ServerProcess server = ServerProcess.startWithHeap(dir.resolve("server"), "sungem", props, logs, heap, ChildJvm.FULL_JIT)) {
            Path spill = server.dataDir().resolve("session-spill");
            long t0 = System.nanoTime();
            Object[] backup = runSampled(agent, AgentProcess.backupArgs(server, "big", volume, dir.resolve("state"),
                    "--block-size", Integer.toString(BS)));
            AgentResult b = (AgentResult) backup[0];
            double backupSeconds = (System.nanoTime() - t0) / 1e9;
            assertThat(b.exitCode()).as("backup at -Xmx%s:\n%s\n%s", heap, b, server.diagnostics()).isZero();
            BackupSummary summary = BackupSummary.parse(b);
            assertThat(summary.sentBlocks()).as("every block is unique and non-zero").isEqualTo(blocks);
            assertThat(count(spill)).as("the committed session left no spill file").isZero();
            long serverAfterBackup = peakRssKib(server.process().pid());

            Path restored = dir.resolve("restored.img");
            long t1 = System.nanoTime();
            Object[] restore = runSampled(agent, AgentProcess.restoreArgs(server, "big", summary.snapshotId(), restored));
            AgentResult r = (AgentResult) restore[0];
            double restoreSeconds = (System.nanoTime() - t1) / 1e9;
            assertThat(r.exitCode()).as("restore at -Xmx%s:\n%s\n%s", heap, r, server.diagnostics()).isZero();
            assertThat(Files.mismatch(volume, restored)).as("restored byte-identical").isEqualTo(-1L);
            Files.delete(restored);

            System.out.printf("session-spill e2e: %d blocks of %d B (%d MiB), server -Xmx%s peak RSS %d MiB after backup, %d MiB"
                            + " after restore; agent -Xmx256m peak RSS %d MiB backup (%.1f s), %d MiB restore (%.1f s)%n",
                    blocks, BS, blocks * BS >> 20, heap, serverAfterBackup >> 10, peakRssKib(server.process().pid()) >> 10,
                    (long) backup[1] >> 10, backupSeconds, (long) restore[1] >> 10, restoreSeconds);

            // a second volume's backup killed once its session has spilled: no file left, nothing visible
            AgentProcess.Running killed = agent.start(AgentProcess.backupArgs(server, "gone", volume, dir.resolve("state-gone"),
                    "--block-size", Integer.toString(BS)));
            long deadline = System.nanoTime() + 120_000_000_000L;
            while (count(spill) == 0 && killed.isAlive() && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(count(spill)).as("the second session spilled before it was killed").isEqualTo(1);
            killed.kill();
            deadline = System.nanoTime() + 30_000_000_000L;
            while (count(spill) > 0 && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertThat(count(spill)).as("the abandoned session's spill file is deleted").isZero();
            assertThat(server.get("/api/v1/volumes/gone").statusCode()).as("no volume, no snapshot from the abandoned session")
                    .isEqualTo(404);
        }
    }
}
