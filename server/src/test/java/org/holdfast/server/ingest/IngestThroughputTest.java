package org.holdfast.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Random;
import org.holdfast.common.protocol.Committed;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Measures (prints, never asserts) loopback throughput of a first backup, an unchanged full
 * backup and a restore of a 256 MiB image with half-compressible blocks. Run with -Pslow (the
 * default build excludes the tag, so -Dgroups=slow alone runs nothing).
 */
@Tag("slow")
class IngestThroughputTest {
    private static final int BS = 4096;

    @TempDir
    Path dir;

    private static long cpu() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    @Test
    void backupAndRestore_256MiB_reportsThroughput() {
        // paranoid leak tracking (the test default) records a stack trace per buffer: not what production pays
        io.netty.util.ResourceLeakDetector.Level level = io.netty.util.ResourceLeakDetector.getLevel();
        io.netty.util.ResourceLeakDetector.setLevel(io.netty.util.ResourceLeakDetector.Level.DISABLED);
        try {
            measure();
        } finally {
            io.netty.util.ResourceLeakDetector.setLevel(level);
        }
    }

    private void measure() {
        int bytes = 256 << 20;
        byte[] img = new byte[bytes];
        Random r = new Random(42);
        byte[] block = new byte[BS];
        for (int lbn = 0; lbn < bytes / BS; lbn++) {
            r.nextBytes(block);
            if (lbn % 2 == 0) {
                java.util.Arrays.fill(block, BS / 4, BS, (byte) 'a'); // compressible
            }
            System.arraycopy(block, 0, img, lbn * BS, BS);
        }
        try (IngestHarness h = IngestHarness.productionSized(dir); AgentDriver a = h.agent()) {
            a.hello();
            long t0 = System.nanoTime();
            long c0 = cpu();
            Committed first = a.backup("tp", img, BS, true);
            long t1 = System.nanoTime();
            long c1 = cpu();
            Committed second = a.backup("tp", img, BS, true);
            long t2 = System.nanoTime();
            long c2 = cpu();
            AgentDriver.Restored restored = a.restore("tp", 1);
            long t3 = System.nanoTime();
            long c3 = cpu();
            assertThat(restored.image()).isEqualTo(img);
            assertThat(second.sentBlocks()).isZero();
            double mib = bytes / (1024.0 * 1024.0);
            System.out.printf("[throughput] first backup %.0f MiB/s (stored %d bytes of %d), unchanged full backup %.0f MiB/s,"
                            + " restore %.0f MiB/s (agent-side decode and verify included)%n",
                    mib / ((t1 - t0) / 1e9), first.storedBytes(), bytes, mib / ((t2 - t1) / 1e9), mib / ((t3 - t2) / 1e9));
            // CPU seconds of the whole JVM (agent driver included): comparable even on a loaded machine
            System.out.printf("[throughput] per CPU-second of the JVM: first backup %.0f MiB, unchanged full backup %.0f MiB,"
                    + " restore %.0f MiB%n", mib / ((c1 - c0) / 1e9), mib / ((c2 - c1) / 1e9), mib / ((c3 - c2) / 1e9));
        }
    }
}
