package org.holdfast.server.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The volume-settings layout: round trips across a reopen, cut messages, refused corrupt values. */
class VolumeSettingsTest {
    @TempDir
    Path dir;

    @Test
    void quotaAndOutcome_surviveReopen_andForgetRemovesBoth() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            VolumeSettings s = new VolumeSettings(db);
            assertThat(s.quota(7)).isEmpty();
            s.setQuota(7, 1L << 40);
            s.recordOutcome(7, new VolumeSettings.Outcome(1234, false, 0, "QUOTA_EXCEEDED: volume 'x' is too big"));
            s.setQuota(8, 0L);
        }
        try (MetadataDb db = MetadataDb.open(dir)) {
            VolumeSettings s = new VolumeSettings(db);
            assertThat(s.quota(7)).hasValue(1L << 40);
            assertThat(s.quota(8)).hasValue(0L);
            assertThat(s.lastOutcome(7)).hasValue(new VolumeSettings.Outcome(1234, false, 0, "QUOTA_EXCEEDED: volume 'x' is too big"));
            s.recordOutcome(7, new VolumeSettings.Outcome(5678, true, 3, null));
            assertThat(s.lastOutcome(7)).hasValue(new VolumeSettings.Outcome(5678, true, 3, null));
            s.setQuota(7, null);
            assertThat(s.quota(7)).isEmpty();
            s.forget(7);
            assertThat(s.lastOutcome(7)).isEmpty();
            assertThat(s.quota(8)).as("other volumes untouched").hasValue(0L);
        }
    }

    @Test
    void recordOutcome_longMessage_cutOnACharacterBoundary() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            VolumeSettings s = new VolumeSettings(db);
            s.recordOutcome(1, new VolumeSettings.Outcome(1, false, 0, "é".repeat(2000)));
            String m = s.lastOutcome(1).orElseThrow().message();
            assertThat(m.getBytes(StandardCharsets.UTF_8).length).isLessThanOrEqualTo(VolumeSettings.MAX_MESSAGE_BYTES);
            assertThat(m).matches("é+");
        }
    }

    @Test
    void reads_corruptValue_refusedNotGuessed() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            byte[] key = new byte[9];
            key[7] = 5;
            key[8] = VolumeSettings.KIND_SETTINGS;
            db.put(db.handle(MetadataDb.Column.VOLUME_SETTINGS), key, new byte[] {9, 0, 0});
            assertThatThrownBy(() -> new VolumeSettings(db).quota(5)).isInstanceOf(CorruptDataException.class);
            assertThatThrownBy(() -> new VolumeSettings(db).setQuota(5, -2L)).isInstanceOf(IllegalArgumentException.class);
        }
    }
}
