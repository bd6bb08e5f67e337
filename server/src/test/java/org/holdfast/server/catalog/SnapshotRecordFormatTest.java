package org.holdfast.server.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HexFormat;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.model.Consistency;
import org.holdfast.server.store.CorruptDataException;
import org.junit.jupiter.api.Test;

/**
 * Golden bytes of the snapshots column (docs/architecture.md): version 1 and 2 records stay readable,
 * version 2 added consistency, version 3 the snapshot id.
 */
class SnapshotRecordFormatTest {
    /** A snapshot value as every server before consistency was recorded wrote it (version 1, 61 bytes). */
    private static final String V1_VALUE = "01" + "0000018bcfe56800" + "0000000040000000" + "00001000" + "0000000040000000"
            + "0000000000000011" + "000000000000000c" + "0000000000000005" + "0000000000003039";
    /** A snapshot value as servers from consistency to the snapshot id wrote it (version 2, 62 bytes, application). */
    private static final String V2_VALUE = "02" + V1_VALUE.substring(2) + "02";
    private static final long ID = 0x8badf00d_0123_4567L;
    private static final VolumeId NAME = new VolumeId("db1");

    private static SnapshotRecord record(Consistency c) {
        return new SnapshotRecord(NAME, 3, 1_700_000_000_000L, 1L << 30, 4096, 1L << 30, 17, 12, 5, 12345, c);
    }

    private static SnapshotRecord record(Consistency c, long id) {
        return new SnapshotRecord(NAME, 3, 1_700_000_000_000L, 1L << 30, 4096, 1L << 30, 17, 12, 5, 12345, c, id);
    }

    @Test
    void snapshot_version1Value_readsConsistencyUnknown() {
        assertThat(HexFormat.of().parseHex(V1_VALUE)).hasSize(CatalogKeys.SNAPSHOT_VALUE_V1_BYTES);
        SnapshotRecord s = CatalogKeys.snapshot(NAME, 3, HexFormat.of().parseHex(V1_VALUE), "test");
        assertThat(s).isEqualTo(record(Consistency.UNKNOWN));
    }

    @Test
    void snapshot_version2Value_readsItsConsistencyAndIdUnknown() {
        assertThat(HexFormat.of().parseHex(V2_VALUE)).hasSize(CatalogKeys.SNAPSHOT_VALUE_V2_BYTES);
        SnapshotRecord s = CatalogKeys.snapshot(NAME, 3, HexFormat.of().parseHex(V2_VALUE), "test");
        assertThat(s).isEqualTo(record(Consistency.APPLICATION, 0));
        assertThat(s.snapshotId()).isZero();
    }

    @Test
    void snapshotValue_withId_writesVersion3WithTheIdAfterTheConsistencyByte() {
        byte[] b = CatalogKeys.snapshotValue(record(Consistency.APPLICATION, ID));
        assertThat(HexFormat.of().formatHex(b)).isEqualTo("03" + V2_VALUE.substring(2) + "8badf00d01234567");
        assertThat(b).hasSize(CatalogKeys.SNAPSHOT_VALUE_BYTES);
        assertThat(CatalogKeys.snapshot(NAME, 3, b, "test")).isEqualTo(record(Consistency.APPLICATION, ID));
    }

    @Test
    void snapshot_version2LengthWithVersion3Byte_corrupt() {
        byte[] b = HexFormat.of().parseHex("03" + V2_VALUE.substring(2));
        assertThatThrownBy(() -> CatalogKeys.snapshot(NAME, 3, b, "test")).isInstanceOf(CorruptDataException.class)
                .hasMessageContaining("version 3");
    }

    @Test
    void snapshotValue_eachConsistency_roundTrips() {
        for (Consistency c : Consistency.values()) {
            assertThat(CatalogKeys.snapshot(NAME, 3, CatalogKeys.snapshotValue(record(c, -1L)), "test")).isEqualTo(record(c, -1L));
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
