package org.holdfast.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The possession column's layout (docs/architecture.md, "possession"), with golden bytes. */
class PossessionIndexTest {
    @TempDir
    Path dir;

    @Test
    void putAll_defaultAndDomainBlocks_storedAsDocumentedAndReadBack() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            PossessionIndex idx = new PossessionIndex(db);
            byte[] pfs = HexFormat.of().parseHex("00112233445566778899aabbccddeeff" + "ffeeddccbbaa99887766554433221100");
            byte[] keys = new byte[64];
            keys[31] = 7;
            keys[63] = 9;
            idx.putAll(new long[] {5}, pfs, null, 1);
            idx.putAll(new long[] {6}, java.util.Arrays.copyOfRange(pfs, 16, 32), java.util.Arrays.copyOfRange(keys, 32, 64), 1);

            byte[] k5 = HexFormat.of().parseHex("0000000000000005");
            byte[] k6 = HexFormat.of().parseHex("0000000000000006");
            assertThat(HexFormat.of().formatHex(db.get(db.handle(MetadataDb.Column.POSSESSION), k5)))
                    .isEqualTo("00112233445566778899aabbccddeeff");
            assertThat(db.get(db.handle(MetadataDb.Column.POSSESSION), k6)).hasSize(48);

            byte[] out = new byte[48];
            boolean[] found = new boolean[3];
            idx.pfs(new long[] {5, 6, 7}, 3, out, found, new byte[8], new byte[48]);
            assertThat(found).containsExactly(true, true, false);
            assertThat(out).startsWith(pfs);

            byte[] fps = new byte[64];
            fps[0] = 1;
            fps[32] = 2;
            idx.indexKeys(new long[] {5, 6}, 2, fps);
            assertThat(fps[0]).as("default-domain block keeps its fingerprint as key").isEqualTo((byte) 1);
            assertThat(fps[63]).as("domain block's key replaces the fingerprint").isEqualTo((byte) 9);
            assertThat(fps[32]).isZero();
        }
    }

    @Test
    void pfs_valueOfWrongLength_corrupt() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            db.put(db.handle(MetadataDb.Column.POSSESSION), HexFormat.of().parseHex("0000000000000005"), new byte[3]);
            PossessionIndex idx = new PossessionIndex(db);
            assertThatThrownBy(() -> idx.pfs(new long[] {5}, 1, new byte[16], new boolean[1], new byte[8], new byte[48]))
                    .isInstanceOf(CorruptDataException.class);
        }
    }
}
