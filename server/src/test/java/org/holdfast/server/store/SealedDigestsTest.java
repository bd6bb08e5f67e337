package org.holdfast.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A range store's sealed-log digest ({@link SealedDigests}) on a real RocksDB: the fixture bytes both
 * ways, the digest of a file, a digest of another log epoch read as none, an unreadable one corrupt.
 */
class SealedDigestsTest {
    /** Log epoch 0x0102030405060708, 12416 bytes, SHA-256 00 01 .. 1f. */
    private static final String DIGEST = "01" + "0102030405060708" + "0000000000003080"
            + "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

    @TempDir
    Path dir;

    @Test
    void digest_fixtureBytes_bothWays_staleEpochNone_unreadableCorrupt() throws Exception {
        byte[] sha = HexFormat.of().parseHex(DIGEST.substring(34));
        SealedDigests.Digest d = new SealedDigests.Digest(0x0102030405060708L, 12416, sha);
        assertThat(HexFormat.of().formatHex(SealedDigests.encode(d))).isEqualTo(DIGEST);
        assertThat(HexFormat.of().formatHex(SealedDigests.key(2))).isEqualTo(HexFormat.of().formatHex("store.object.sealed/00000002".getBytes()));
        try (MetadataDb db = MetadataDb.open(dir.resolve("db"))) {
            try (MetadataBatch b = new MetadataBatch()) {
                SealedDigests.put(db, b, 2, d);
                db.write(b, true);
            }
            SealedDigests.Digest back = SealedDigests.get(db, 2, 0x0102030405060708L);
            assertThat(back.size()).isEqualTo(12416);
            assertThat(back.sha256()).isEqualTo(sha);
            assertThat(SealedDigests.get(db, 2, 7)).as("a digest of another object of the log").isNull();
            assertThat(SealedDigests.get(db, 3, 7)).isNull();
            try (MetadataBatch b = new MetadataBatch()) {
                db.put(b, MetadataDb.Column.META, SealedDigests.key(2), HexFormat.of().parseHex("02" + DIGEST.substring(2)));
                db.write(b, true);
            }
            assertThatThrownBy(() -> SealedDigests.get(db, 2, 0x0102030405060708L)).isInstanceOf(CorruptDataException.class)
                    .hasMessageContaining("this build reads version 1");
        }
        Path f = Files.write(dir.resolve("f"), "abc".getBytes());
        assertThat(HexFormat.of().formatHex(SealedDigests.of(f, 5).sha256()))
                .isEqualTo("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }
}
