package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.holdfast.server.cluster.ClusterRole;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.MetadataBatch;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** holdfast.cluster.data is fixed when the store is created; the other mode, and workers without what they need, are refused at start. */
class ClusterDataModeTest {
    private static final ClusterRole MASTER = ClusterRole.MASTER;

    @TempDir
    Path dir;

    private static ClusterDataMode.ClusterDataModeException refusal(Runnable r) {
        try {
            r.run();
        } catch (ClusterDataMode.ClusterDataModeException e) {
            return e;
        }
        throw new AssertionError("not refused");
    }

    @Test
    void settle_newStoreWorkers_recordsWorkersAndRefusesMasterLater() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            assertThat(ClusterDataMode.settle(ClusterDataMode.WORKERS, MASTER, "cluster", db)).isEqualTo(ClusterDataMode.WORKERS);
        }
        try (MetadataDb db = MetadataDb.open(dir)) {
            ClusterDataMode.ClusterDataModeException e = refusal(() -> ClusterDataMode.settle(ClusterDataMode.MASTER, MASTER,
                    "cluster", db));
            assertThat(e).hasMessageContaining("created with holdfast.cluster.data=workers").hasMessageContaining("on the workers");
            assertThat(e.action()).contains("holdfast.cluster.data=workers");
            assertThat(ClusterDataMode.recorded(db)).as("the refusal changes nothing").isEqualTo(ClusterDataMode.WORKERS);
        }
    }

    @Test
    void settle_workersWithGcBookkeepingOn_accepted_masterRoutesItsGcToTheOwners() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            assertThat(ClusterDataMode.settle(ClusterDataMode.WORKERS, MASTER, "cluster", db)).isEqualTo(ClusterDataMode.WORKERS);
            assertThat(ClusterDataMode.recorded(db)).isEqualTo(ClusterDataMode.WORKERS);
        }
    }

    @Test
    void settle_workersOnAStandaloneOrWithAnotherEngine_refusedAndNothingRecorded() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            assertThat(refusal(() -> ClusterDataMode.settle(ClusterDataMode.WORKERS, ClusterRole.STANDALONE, "cluster", db)))
                    .hasMessageContaining("only a master");
            assertThat(refusal(() -> ClusterDataMode.settle(ClusterDataMode.WORKERS, MASTER, "sungem", db)))
                    .hasMessageContaining("holdfast.dedup.engine=cluster");
            assertThat(ClusterDataMode.recorded(db)).isNull();
        }
    }

    @Test
    void settle_storeFromBeforeTheSettingWithVolumes_isMasterAndRefusesWorkersRecordingNothing() {
        try (MetadataDb db = MetadataDb.open(dir); MetadataBatch b = new MetadataBatch()) {
            db.putMetaLong(b, FormatVersions.META_NEXT_VOLUME_ID, 2);
            db.write(b, true);
            assertThat(refusal(() -> ClusterDataMode.settle(ClusterDataMode.WORKERS, MASTER, "cluster", db)))
                    .hasMessageContaining("created with holdfast.cluster.data=master");
            assertThat(ClusterDataMode.recorded(db)).as("the refusal records nothing").isNull();
            assertThat(ClusterDataMode.settle(ClusterDataMode.MASTER, MASTER, "sungem", db))
                    .isEqualTo(ClusterDataMode.MASTER);
            assertThat(ClusterDataMode.recorded(db)).isEqualTo(ClusterDataMode.MASTER);
        }
    }

    @Test
    void parse_masterOrWorkers_rejectsOthers() {
        assertThat(ClusterDataMode.parse(" Workers ")).isEqualTo(ClusterDataMode.WORKERS);
        assertThat(ClusterDataMode.parse("master")).isEqualTo(ClusterDataMode.MASTER);
        assertThatThrownBy(() -> ClusterDataMode.parse("both")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("holdfast.cluster.data");
    }
}
