package org.holdfast.server.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HexFormat;
import org.holdfast.common.id.VolumeId;
import org.holdfast.server.store.CorruptDataException;
import org.junit.jupiter.api.Test;

/** Golden bytes of the volumes column (docs/architecture.md): old records stay readable, domains are appended. */
class VolumeRecordFormatTest {
    /** A volume value as every server before dedup domains wrote it (37 bytes). */
    private static final String OLD_VALUE = "01" + "0000000000000007" + "00001000" + "0000018bcfe56800"
            + "0000000000000003" + "0000000040000000";
    private static final VolumeId NAME = new VolumeId("db1");

    @Test
    void volume_valueWithoutDomain_readsAsDefaultDomain() {
        VolumeRecord v = CatalogKeys.volume(CatalogKeys.volumeKey(NAME), HexFormat.of().parseHex(OLD_VALUE), "test");
        assertThat(v).isEqualTo(new VolumeRecord(NAME, 7, 4096, 1_700_000_000_000L, 3, 1L << 30, "default"));
    }

    @Test
    void volumeValue_defaultDomain_writesTheOldLayout() {
        VolumeRecord v = new VolumeRecord(NAME, 7, 4096, 1_700_000_000_000L, 3, 1L << 30);
        assertThat(HexFormat.of().formatHex(CatalogKeys.volumeValue(v))).isEqualTo(OLD_VALUE);
    }

    @Test
    void volumeValue_otherDomain_appendsLengthAndName() {
        VolumeRecord v = new VolumeRecord(NAME, 7, 4096, 1_700_000_000_000L, 3, 1L << 30, "tenant-a");
        byte[] b = CatalogKeys.volumeValue(v);
        assertThat(HexFormat.of().formatHex(b)).isEqualTo(OLD_VALUE + "08" + "74656e616e742d61");
        assertThat(CatalogKeys.volume(CatalogKeys.volumeKey(NAME), b, "test")).isEqualTo(v);
    }

    @Test
    void volume_domainLengthDisagreesWithValue_corrupt() {
        byte[] b = HexFormat.of().parseHex(OLD_VALUE + "09" + "74656e616e742d61");
        assertThatThrownBy(() -> CatalogKeys.volume(CatalogKeys.volumeKey(NAME), b, "test")).isInstanceOf(CorruptDataException.class);
    }
}
