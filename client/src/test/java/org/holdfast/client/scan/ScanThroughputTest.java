package org.holdfast.client.scan;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Locale;
import java.util.Random;
import org.holdfast.common.protocol.ProtocolLimits;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Measures the agent's scan + hash rate (read, zero detection, SHA-256, change detection, state
 * writing) on a 2 GiB image in the page cache, and prints it. A measurement, not a gate: it
 * asserts only that every block was seen. Run: mvn -pl client -am test -Pslow -Dtest=ScanThroughputTest
 * -Dsurefire.failIfNoSpecifiedTests=false (-Dholdfast.scan.mib=1024 for 1 GiB).
 */
@Tag("slow")
class ScanThroughputTest {

    @Test
    void scan_twoGibImage_printsRate() throws Exception {
        long mib = Long.getLong("holdfast.scan.mib", 2048);
        int bs = 4096;
        Path dir = Files.createTempDirectory("hf-scan");
        Path image = dir.resolve("big.img");
        try {
            write(image, mib << 20, bs);
            long blocks = ProtocolLimits.blockCount(mib << 20, bs);
            for (int round = 0; round < 3; round++) {
                long t0 = System.nanoTime();
                long cpu0 = cpuNanos();
                long[] changed = {0};
                VolumeScanner.Result r;
                try (FileChannel ch = FileChannel.open(image, StandardOpenOption.READ);
                     StateFile.Writer state = StateFile.Writer.create(dir.resolve("s").resolve("v.state"), bs, mib << 20);
                     BlockReader reader = new BlockReader(ch, mib << 20, bs, ChangedBlockList.all(blocks),
                             BlockReader.DEFAULT_CHUNK_BYTES, BlockReader.DEFAULT_SLOTS,
                             Runtime.getRuntime().availableProcessors())) {
                    r = VolumeScanner.scan(reader, new ChangeDetector(null), null, state, blocks, bs,
                            (lbn, fps, fpOff, data, dataOff, zero, tag) -> changed[0]++, b -> { });
                    state.commit(1, 0);
                }
                double secs = (System.nanoTime() - t0) / 1e9;
                double cpu = (cpuNanos() - cpu0) / 1e9;
                // The machine is shared: MB per CPU-second says what the agent costs, wall MB/s what it got.
                System.out.printf(Locale.ROOT, "[scan] %d MiB, %d cores: %.2f s wall, %.0f MB/s wall, %.2f CPU-s,"
                                + " %.0f MB per CPU-second, load %.1f (round %d)%n", mib,
                        Runtime.getRuntime().availableProcessors(), secs, (mib << 20) / 1e6 / secs, cpu,
                        (mib << 20) / 1e6 / cpu, java.lang.management.ManagementFactory.getOperatingSystemMXBean()
                                .getSystemLoadAverage(), round);
                assertThat(r.blocksRead()).isEqualTo(blocks);
                assertThat(changed[0]).isEqualTo(blocks);
            }
        } finally {
            try (var s = Files.walk(dir)) {
                s.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    private static long cpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
                .getOperatingSystemMXBean()).getProcessCpuTime();
    }

    /** Distinct, incompressible-ish blocks with one zero block in 16, written fast. */
    static void write(Path image, long bytes, int bs) throws IOException {
        byte[] chunk = new byte[8 << 20];
        new Random(1).nextBytes(chunk);
        try (FileChannel ch = FileChannel.open(image, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            long counter = 0;
            for (long pos = 0; pos < bytes; pos += chunk.length) {
                ByteBuffer b = ByteBuffer.wrap(chunk);
                for (int off = 0; off < chunk.length; off += bs) {
                    b.putLong(off, ++counter);
                }
                for (int off = 0; off < chunk.length; off += 16 * bs) {
                    java.util.Arrays.fill(chunk, off, off + bs, (byte) 0);
                }
                ch.write(ByteBuffer.wrap(chunk, 0, (int) Math.min(chunk.length, bytes - pos)), pos);
                new Random(counter).nextBytes(chunk); // refresh zeroed blocks for the next chunk
            }
        }
    }
}
