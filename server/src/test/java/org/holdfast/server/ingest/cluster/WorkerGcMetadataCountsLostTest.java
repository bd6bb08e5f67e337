package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.holdfast.common.id.PbnRange;
import org.holdfast.gc.bosc.BoscSettings;
import org.holdfast.gc.gma.GmaFormat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The counts-lost mark of {@link WorkerGcMetadata} survives a crash while the GC metadata is being created. */
class WorkerGcMetadataCountsLostTest {
    private static final PbnRange RANGE = new PbnRange(1L << 40, (1L << 40) + (1L << 20));
    private static final BoscSettings BOSC = BoscSettings.defaults().withCommitters(1);

    @TempDir
    Path dir;

    /** Stands for the process dying at that point: not a RuntimeException, so nothing on the way catches it. */
    private static final class Crash extends Error {
        private static final long serialVersionUID = 1L;
    }

    @Test
    void claim_crashWhileCheckingHistory_restartStillMarksCountsLost() {
        Path gcDir = dir.resolve("range-data").resolve("gc");
        WorkerGcMetadata first = new WorkerGcMetadata(gcDir, BOSC);
        first.checkHistoryAgainst(r -> {
            throw new Crash();
        });
        assertThatThrownBy(() -> first.claim(RANGE)).isInstanceOf(Crash.class);
        first.close();

        // the restarted worker: the range store beside it holds 5 blocks whose counts the fresh GMA lacks
        try (WorkerGcMetadata again = new WorkerGcMetadata(gcDir, BOSC)) {
            again.checkHistoryAgainst(r -> 5);
            again.claim(RANGE);
            assertThat(again.countsLost()).as("a GMA created over a store with blocks is marked, crash or not").isTrue();
            assertThat(Files.exists(gcDir.resolve(GmaFormat.RANGE_FILE))).isTrue();
        }
    }

    @Test
    void claim_freshOverEmptyStore_notMarked() {
        try (WorkerGcMetadata gc = new WorkerGcMetadata(dir.resolve("gc"), BOSC)) {
            gc.checkHistoryAgainst(r -> 0);
            gc.claim(RANGE);
            assertThat(gc.countsLost()).isFalse();
        }
    }
}
