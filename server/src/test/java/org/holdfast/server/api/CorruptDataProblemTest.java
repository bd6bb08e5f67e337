package org.holdfast.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import org.holdfast.server.store.CorruptBlockException;
import org.holdfast.server.store.CorruptDataException;
import org.junit.jupiter.api.Test;
import org.springframework.http.ProblemDetail;

/** The corrupt-data problem detail names everything an operator needs to find a damaged block. */
class CorruptDataProblemTest {
    private final ProblemAdvice advice = new ProblemAdvice();

    @Test
    void corrupt_damagedBlockWithContext_problemNamesFilePbnVolumeSnapshotLbn() {
        CorruptBlockException e = new CorruptBlockException("/data/log-00000003.hfl", 41, 8192, "stored bytes checksum (CRC32C) mismatch")
                .in("db01", 3L, 17L);
        ProblemDetail p = advice.corrupt(e);
        assertThat(p.getStatus()).isEqualTo(500);
        assertThat(p.getType()).isEqualTo(ProblemTypes.CORRUPT_DATA);
        assertThat(p.getDetail()).contains("log-00000003.hfl").contains("pbn 41").contains("snapshot db01@3").contains("LBN 17");
        assertThat(p.getProperties()).containsEntry("file", "/data/log-00000003.hfl").containsEntry("pbn", 41L)
                .containsEntry("offset", 8192L).containsEntry("volume", "db01").containsEntry("snapshot", "db01@3")
                .containsEntry("lbn", 17L);
    }

    @Test
    void corrupt_otherCorruption_problemAdvisesTheChecker() {
        ProblemDetail p = advice.corrupt(new CorruptDataException("catalog.map", "/data/catalog", "volume 3", "map value is not 8 bytes"));
        assertThat(p.getType()).isEqualTo(ProblemTypes.CORRUPT_DATA);
        assertThat(p.getDetail()).contains("map value").contains("run the checker");
        assertThat(p.getProperties()).isNull();
    }

    @Test
    void corruptGcMetadata_damagedChunkAtRuntime_corruptDataNamingTheChunkAndTheRebuild() {
        ProblemDetail p = advice.corruptGcMetadata(new org.holdfast.gc.GcCorruptException("gma", java.nio.file.Path.of("/data/gc/gma.dat"),
                "chunk 4", "both frames fail their checksum"));
        assertThat(p.getStatus()).isEqualTo(500);
        assertThat(p.getType()).isEqualTo(ProblemTypes.CORRUPT_DATA);
        assertThat(p.getDetail()).contains("gma.dat").contains("chunk 4").contains("holdfast-server gc-rebuild --data-dir");
    }

    @Test
    void store_catalogStopped_503CatalogStoppedSayingWhatToDo() {
        ProblemDetail p = advice.store(new org.holdfast.server.store.CatalogStoppedException("/data/catalog",
                "a write-ahead-log write failed: IOError No space left on device", new RuntimeException("IO error")));
        assertThat(p.getStatus()).isEqualTo(503);
        assertThat(p.getType()).isEqualTo(ProblemTypes.CATALOG_STOPPED);
        assertThat(p.getDetail()).contains("stopped taking writes").contains("No space left").contains("free space")
                .contains("restart the server");
    }
}
