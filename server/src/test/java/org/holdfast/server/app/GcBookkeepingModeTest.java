package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.MetadataBatch;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The bookkeeping mode is fixed when the store is created, and the other mode is refused at start. */
class GcBookkeepingModeTest {
    @TempDir
    Path dir;

    @Test
    void settle_newStoreOff_recordsOffAndRefusesOnLater() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            assertThat(GcBookkeepingMode.settle(GcBookkeepingMode.OFF, db)).isEqualTo(GcBookkeepingMode.OFF);
        }
        try (MetadataDb db = MetadataDb.open(dir)) {
            assertThat(GcBookkeepingMode.recorded(db)).isEqualTo(GcBookkeepingMode.OFF);
            assertThatThrownBy(() -> GcBookkeepingMode.settle(GcBookkeepingMode.ON, db))
                    .isInstanceOf(GcBookkeepingMode.GcModeMismatchException.class)
                    .hasMessageContaining("created with holdfast.gc.bookkeeping=off")
                    .hasMessageContaining("never counted")
                    .satisfies(e -> assertThat(((GcBookkeepingMode.GcModeMismatchException) e).action())
                            .contains("new data directory"));
            // the refusal changes nothing: still an off store
            assertThat(GcBookkeepingMode.recorded(db)).isEqualTo(GcBookkeepingMode.OFF);
            assertThat(GcBookkeepingMode.settle(GcBookkeepingMode.OFF, db)).isEqualTo(GcBookkeepingMode.OFF);
        }
    }

    @Test
    void settle_newStoreOn_recordsOnAndRefusesOffLater() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            assertThat(GcBookkeepingMode.settle(GcBookkeepingMode.ON, db)).isEqualTo(GcBookkeepingMode.ON);
        }
        try (MetadataDb db = MetadataDb.open(dir)) {
            assertThatThrownBy(() -> GcBookkeepingMode.settle(GcBookkeepingMode.OFF, db))
                    .isInstanceOf(GcBookkeepingMode.GcModeMismatchException.class)
                    .hasMessageContaining("created with holdfast.gc.bookkeeping=on")
                    .satisfies(e -> assertThat(((GcBookkeepingMode.GcModeMismatchException) e).action())
                            .contains("holdfast.gc.bookkeeping=on"));
            assertThat(GcBookkeepingMode.recorded(db)).isEqualTo(GcBookkeepingMode.ON);
        }
    }

    @Test
    void settle_storeFromBeforeTheSettingWithVolumes_isOnAndRefusesOff() {
        try (MetadataDb db = MetadataDb.open(dir); MetadataBatch b = new MetadataBatch()) {
            db.putMetaLong(b, FormatVersions.META_NEXT_VOLUME_ID, 2);
            db.write(b, true);
            assertThatThrownBy(() -> GcBookkeepingMode.settle(GcBookkeepingMode.OFF, db))
                    .isInstanceOf(GcBookkeepingMode.GcModeMismatchException.class);
            assertThat(GcBookkeepingMode.recorded(db)).isEqualTo(GcBookkeepingMode.ON);
        }
    }

    @Test
    void parse_acceptsOnOffAndYamlBooleans_rejectsOthers() {
        assertThat(GcBookkeepingMode.parse("on")).isEqualTo(GcBookkeepingMode.ON);
        assertThat(GcBookkeepingMode.parse("OFF")).isEqualTo(GcBookkeepingMode.OFF);
        assertThat(GcBookkeepingMode.parse("false")).isEqualTo(GcBookkeepingMode.OFF);
        assertThatThrownBy(() -> GcBookkeepingMode.parse("maybe")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("holdfast.gc.bookkeeping");
    }
}
