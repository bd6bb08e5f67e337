package org.holdfast.server.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HexFormat;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.model.Consistency;
import org.holdfast.server.store.CorruptDataException;
import org.junit.jupiter.api.Test;

/** Golden bytes of the snapshots column (docs/architecture.md): version 1 records stay readable, version 2 adds consistency. */
class SnapshotRecordFormatTest {
    /** A snapshot value as every server before consistency was recorded wrote it (version 1, 61 bytes). */
    private static final String V1_VALUE = "01" + "0000018bcfe56800" + "0000000040000000" + "00001000" + "0000000040000000"
            + "0000000000000011" + "000000000000000c" + "0000000000000005" + "0000000000003039";
    private static final VolumeId NAME = new VolumeId("db1");

    private static SnapshotRecord record(Consistency c) {
        return new SnapshotRecord(NAME, 3, 1_700_000_000_000L, 1L << 30, 4096, 1L << 30, 17, 12, 5, 12345, c);
    }

    @Test
    void snapshot_version1Value_readsConsistencyUnknown() {
        assertThat(HexFormat.of().parseHex(V1_VALUE)).hasSize(CatalogKeys.SNAPSHOT_VALUE_V1_BYTES);
        SnapshotRecord s = CatalogKeys.snapshot(NAME, 3, HexFormat.of().parseHex(V1_VALUE), "test");
        assertThat(s).isEqualTo(record(Consistency.UNKNOWN));
    }

    @Test
    void snapshotValue_application_writesVersion2WithTheConsistencyByte() {
        byte[] b = CatalogKeys.snapshotValue(record(Consistency.APPLICATION));
        assertThat(HexFormat.of().formatHex(b)).isEqualTo("02" + V1_VALUE.substring(2) + "02");
        assertThat(CatalogKeys.snapshot(NAME, 3, b, "test")).isEqualTo(record(Consistency.APPLICATION));
    }

    @Test
    void snapshotValue_eachConsistency_roundTrips() {
        for (Consistency c : Consistency.values()) {
            assertThat(CatalogKeys.snapshot(NAME, 3, CatalogKeys.snapshotValue(record(c)), "test").consistency()).isEqualTo(c);
        }
    }

    @Test
    void snapshot_version1LengthWithVersion2Byte_corrupt() {
        byte[] b = HexFormat.of().parseHex("02" + V1_VALUE.substring(2));
        assertThatThrownBy(() -> CatalogKeys.snapshot(NAME, 3, b, "test")).isInstanceOf(CorruptDataException.class)
                .hasMessageContaining("version 2");
    }

    @Test
    void snapshot_unknownConsistencyCode_corrupt() {
        byte[] b = HexFormat.of().parseHex("02" + V1_VALUE.substring(2) + "07");
        assertThatThrownBy(() -> CatalogKeys.snapshot(NAME, 3, b, "test")).isInstanceOf(CorruptDataException.class)
                .hasMessageContaining("consistency 7");
    }
}
