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
 * backup and a restore of a 256 MiB image with half-compressible blocks. Run with -Pslow or
 * -Dgroups=slow.
 */
@Tag("slow")
class IngestThroughputTest {
    private static final int BS = 4096;

    @TempDir
    Path dir;

    @Test
    void backupAndRestore_256MiB_reportsThroughput() {
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
        try (IngestHarness h = new IngestHarness(dir); AgentDriver a = h.agent()) {
            a.hello();
            long t0 = System.nanoTime();
            Committed first = a.backup("tp", img, BS, true);
            long t1 = System.nanoTime();
            Committed second = a.backup("tp", img, BS, true);
            long t2 = System.nanoTime();
            AgentDriver.Restored restored = a.restore("tp", 1);
            long t3 = System.nanoTime();
            assertThat(restored.image()).isEqualTo(img);
            assertThat(second.sentBlocks()).isZero();
            double mib = bytes / (1024.0 * 1024.0);
            System.out.printf("[throughput] first backup %.0f MiB/s (stored %d bytes of %d), unchanged full backup %.0f MiB/s,"
                            + " restore %.0f MiB/s (agent-side decode and verify included)%n",
                    mib / ((t1 - t0) / 1e9), first.storedBytes(), bytes, mib / ((t2 - t1) / 1e9), mib / ((t3 - t2) / 1e9));
        }
    }
}
