package org.holdfast.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A u64 meta value reads the same through the open catalog and the read-only peek, and a damaged one is refused by both. */
class MetaLongTest {
    @TempDir
    Path dir;

    @Test
    void decode_absentEightOrOtherLength_defaultValueOrCorrupt() {
        assertThat(MetaLong.decode(null, "p", "k", 42)).isEqualTo(42);
        assertThat(MetaLong.decode(MetaLong.encode(-2), "p", "k", 0)).isEqualTo(-2);
        assertThat(MetaLong.encode(0x0102030405060708L)).containsExactly(1, 2, 3, 4, 5, 6, 7, 8);
        assertThatThrownBy(() -> MetaLong.decode(new byte[7], "/cat", "store.object.epoch", 0))
                .isInstanceOf(CorruptDataException.class).hasMessageContaining("store.object.epoch").hasMessageContaining("7 bytes");
    }

    @Test
    void metaLong_openCatalogAndPeek_readTheSameValueAndRefuseTheSameDamage() {
        Path cat = dir.resolve("catalog");
        try (MetadataDb db = MetadataDb.open(cat, List.of(), true); MetadataBatch b = new MetadataBatch()) {
            db.putMetaLong(b, "a", 1L << 40);
            db.put(b, MetadataDb.Column.META, MetadataDb.bytes("bad"), new byte[] {1, 2, 3});
            db.write(b, true);
            assertThat(db.metaLong("a", 0)).isEqualTo(1L << 40);
            assertThat(db.metaLong("none", 5)).isEqualTo(5);
            assertThatThrownBy(() -> db.metaLong("bad", 0)).isInstanceOf(CorruptDataException.class).hasMessageContaining("3 bytes");
        }
        assertThat(CatalogPeek.metaLong(cat, "a", 0)).isEqualTo(1L << 40);
        assertThat(CatalogPeek.metaLong(cat, "none", 5)).isEqualTo(5);
        assertThatThrownBy(() -> CatalogPeek.metaLong(cat, "bad", 0)).isInstanceOf(CorruptDataException.class)
                .hasMessageContaining("3 bytes");
    }
}
