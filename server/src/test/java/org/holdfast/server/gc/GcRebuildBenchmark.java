package org.holdfast.server.gc;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Random;
import org.holdfast.common.id.VolumeId;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.CommitHook;
import org.holdfast.server.catalog.SessionMap;
import org.holdfast.server.catalog.SnapshotCommit;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Measures (prints, asserts nothing about speed) the GC metadata rebuild over a synthetic catalog:
 * two volumes of 1 M blocks with 4 snapshots each (2.6 M map entries, 2.3 M distinct PBNs). The
 * blocks are not stored (only the catalog matters for the cost), so all count as missing. Run with -Pslow.
 */
@Tag("slow")
class GcRebuildBenchmark {
    private static final int BLOCKS = 1 << 20;

    @TempDir
    Path dir;

    @Test
    void measure_rebuild() {
        long entries = 0;
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            Catalog catalog = new Catalog(db);
            SnapshotCommit commit = new SnapshotCommit(catalog, CommitHook.NONE, Clock.systemUTC());
            long pbn = 1;
            Random r = new Random(3);
            for (String name : new String[] {"bench-a", "bench-b"}) {
                for (int seq = 0; seq < 4; seq++) {
                    int n = seq == 0 ? BLOCKS : BLOCKS / 10;
                    SessionMap m = new SessionMap(n);
                    int[] lbns = seq == 0 ? null : r.ints(0, BLOCKS).distinct().limit(n).sorted().toArray();
                    for (int i = 0; i < n; i++) {
                        m.add(seq == 0 ? i : lbns[i], pbn++);
                    }
                    commit.commit(new SnapshotCommit.Request(new VolumeId(name), 4096, BLOCKS * 4096L, seq, m, 0, n, n, 0));
                    entries += n;
                }
            }
            for (int passChunks : new int[] {512, 64}) {
                var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
                long cpu0 = os.getProcessCpuTime();
                long t0 = System.nanoTime();
                GcMetadataRebuild.Report rep = new GcMetadataRebuild(dir, catalog, new GcMetadataRebuild.Settings(Duration.ofHours(24), passChunks),
                        Clock.systemUTC(), line -> { }).run();
                long wall = (System.nanoTime() - t0) / 1_000_000;
                long cpu = (os.getProcessCpuTime() - cpu0) / 1_000_000;
                System.out.printf("[bench] gc-rebuild: %,d map entries, %,d PBNs, %d chunks, %d pass(es) of %d chunks: %,d ms wall, %,d ms CPU,"
                        + " %,.0f map entries/s; load %.1f%n", rep.mapEntries(), rep.referencedPbns(), rep.chunksWritten(), rep.passes(),
                        passChunks, wall, cpu, rep.mapEntries() * 1000.0 / Math.max(1, wall), os.getSystemLoadAverage());
                assertThat(rep.mapEntries()).isEqualTo(entries);
            }
        }
    }
}
