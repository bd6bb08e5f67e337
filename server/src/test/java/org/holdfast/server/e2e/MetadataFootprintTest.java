package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.holdfast.server.e2e.VolumeImage.Content;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Metadata stays small at rest (issue 14): a real server backs up a mixed volume twice (full, then
 * an incremental), is stopped orderly, and everything in the data directory beside the data logs
 * is measured; again after a GC run and another orderly stop. Prints the table per part
 * (docs/benchmarks.md, "Space beside the data logs").
 */
class MetadataFootprintTest {
    private static final int MIB = 1 << 20;
    /** Image size: property {@code holdfast.footprint.mib}, 128 MiB by default. */
    private static final int IMAGE_MIB = Integer.getInteger("holdfast.footprint.mib", 128);
    /**
     * Bound on everything beside the data logs. The goal is 5 %; with container format 2
     * and Bloom file format 3 this mix (a third of the blocks compress about 3:1) measures 4.6 %
     * after the stop and 4.3 to 4.4 % after the GC run at 192 MiB, and 4.9 % after the stop, 4.7 to
     * 4.9 % after GC at the default 128 MiB, where the fixed parts (catalog/other, 216 KB) weigh more.
     * After GC the catalog tables move by about 0.3 % as RocksDB has compacted the deletions or not
     * (docs/benchmarks.md, "Space beside the data logs"). 5.2 %, not 5 %: 4.9 % leaves too little
     * for that on a loaded CI machine. The bound catches a regression such as a full-size file or
     * a second GMA frame coming back.
     */
    private static final double MAX_SHARE = 0.052;
    /** Container files per stored block: 32 bytes of fingerprint, the rest compressed (48 in version 1). */
    private static final int MAX_CONTAINER_BYTES_PER_BLOCK = 36;
    /** Bloom filter files per stored block: Rice-coded gaps, 12.7 to 13.6 here (16.9 to 17.8 in version 2). */
    private static final int MAX_BLOOM_BYTES_PER_BLOCK = 14;

    private final LogDir logs = new LogDir("MetadataFootprintTest");
    private final AgentProcess agent = new AgentProcess(logs);

    @TempDir
    Path work;

    @Test
    void orderlyStop_andGcRun_leaveMetadataSmallBesideTheDataLogs() throws Exception {
        Path source = work.resolve("volume.img");
        Path state = Files.createDirectories(work.resolve("state"));
        VolumeImage img = VolumeImage.generate(1414, IMAGE_MIB * MIB);
        DataDirFootprint afterStop;
        DataDirFootprint afterGc;
        long stored;
        try (ServerProcess server = ServerProcess.start(work.resolve("server"), "sungem",
                Map.of("holdfast.tls.enabled", "false", "holdfast.gc.default-retention", "keep-last=1", "holdfast.gc.grace", "1s"), logs)) {
            img.writeTo(source);
            stored = agent.backup(server, "footprint", source, state).newBlocks();
            for (int i = 0; i < 8; i++) {
                img.fill(img.randomOffset(2 * MIB, 4096), 2 * MIB, i % 2 == 0 ? Content.RANDOM : Content.COMPRESSIBLE);
            }
            img.writeTo(source);
            stored += agent.backup(server, "footprint", source, state).newBlocks();
            server.close();
            assertThat(server.dataDir().resolve("gc").resolve("gma.dw")).as("GMA journal empty at rest").isEmptyFile();
            afterStop = DataDirFootprint.of(server.dataDir());
            System.out.println(afterStop.table("MetadataFootprintTest: after two backups and an orderly stop ("
                    + IMAGE_MIB + " MiB image)", stored));

            server.start();
            Thread.sleep(1500); // keep-last=1 and a grace of 1 s: the blocks the second backup replaced are garbage now
            JsonNode gc = server.runJob("/api/v1/gc/runs", Duration.ofMinutes(2));
            assertThat(gc.path("state").asText()).as("GC run: %s", gc).isEqualTo("succeeded");
            server.close();
            assertThat(server.dataDir().resolve("gc").resolve("gma.dw")).as("GMA journal empty at rest").isEmptyFile();
            afterGc = DataDirFootprint.of(server.dataDir());
            System.out.println(afterGc.table("MetadataFootprintTest: after a GC run and an orderly stop", stored));
        }
        for (DataDirFootprint f : new DataDirFootprint[] {afterStop, afterGc}) {
            assertThat(f.dataLogBytes()).as("data logs").isGreaterThan((long) IMAGE_MIB * MIB / 4);
            // The three known causes of issue 14, each bounded at rest:
            assertThat(f.bytes("sungem/sfi.snapshot")).as("SFI snapshot is written at its used size").isLessThan(2L * MIB);
            assertThat(f.bytes("gc/log (BOSC log)")).as("BOSC log is trimmed once committed").isLessThan(64L << 10);
            assertThat(f.bytes("catalog/*.log (WAL)")).as("catalog WAL is empty after an orderly close").isLessThan(64L << 10);
            // and the smaller parts since: one GMA chunk per 8191 PBNs (its journal empty), no RocksDB info log file
            assertThat(f.bytes("gc/other")).as("GMA, 16 bytes per PBN slot").isLessThan(20L * stored);
            assertThat(f.bytes("catalog/LOG* (info log)")).as("RocksDB's info log goes to the server log").isZero();
            assertThat(f.bytes("containers/")).as("container files, format 2")
                    .isLessThan((long) MAX_CONTAINER_BYTES_PER_BLOCK * stored);
            long bloom = f.metadataBytes().entrySet().stream().filter(e -> e.getKey().endsWith(".bloom"))
                    .mapToLong(Map.Entry::getValue).sum();
            assertThat(bloom).as("Bloom filter files, format 3").isPositive()
                    .isLessThan((long) MAX_BLOOM_BYTES_PER_BLOCK * stored);
            assertThat(f.share()).as("metadata beside the data logs, share").isLessThan(MAX_SHARE);
        }
    }
}
