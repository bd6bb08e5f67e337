package org.holdfast.gc.gma;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.RandomAccessFile;
import java.nio.file.Path;
import java.util.concurrent.locks.ReentrantLock;
import org.holdfast.gc.GcCorruptException;
import org.holdfast.gc.gma.GmaChunk.UpdateKinds;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GcMetadataArrayTest {
    @TempDir
    Path dir;

    private static void update(GcMetadataArray gma, long lsn, int kind, long pbn, long value) {
        long c = GmaFormat.chunkOf(pbn);
        ReentrantLock l = gma.lock(c);
        l.lock();
        try {
            GmaChunk chunk = gma.load(c);
            chunk.apply(lsn, kind, pbn, value);
            gma.write(chunk);
        } finally {
            l.unlock();
        }
    }

    private static long[] slot(GcMetadataArray gma, long pbn) {
        long c = GmaFormat.chunkOf(pbn);
        ReentrantLock l = gma.lock(c);
        l.lock();
        try {
            GmaChunk chunk = gma.load(c);
            int s = GmaFormat.slotOf(pbn);
            return new long[] {chunk.rc(s), chunk.pins(s), chunk.flags(s), chunk.expiry(s), chunk.appliedLsn()};
        } finally {
            l.unlock();
        }
    }

    @Test
    void layout_chunkIs128KiB_slotsMapBackToPbn() {
        assertThat(GmaFormat.CHUNK_BYTES).isEqualTo(131072);
        assertThat(GmaFormat.PBNS_PER_CHUNK).isEqualTo(8191);
        for (long pbn : new long[] {0, 1, 8190, 8191, 8192, 123_456_789L}) {
            assertThat(GmaFormat.pbnAt(GmaFormat.chunkOf(pbn), GmaFormat.slotOf(pbn))).isEqualTo(pbn);
        }
    }

    @Test
    void write_reopen_stateComesFromDisk() {
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4)) {
            update(gma, 1, UpdateKinds.RC_ADD, 5, 2);
            update(gma, 2, UpdateKinds.RAISE_EXPIRY, 5, 1000);
            update(gma, 3, UpdateKinds.PIN_ADD, 20_000, 1);
            update(gma, 4, UpdateKinds.RAISE_EXPIRY, 5, 500); // lower: ignored
            gma.sync();
        }
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4)) {
            assertThat(slot(gma, 5)).containsExactly(2, 0, GmaFormat.FLAG_USED, 1000, 4);
            assertThat(slot(gma, 20_000)).containsExactly(0, 1, GmaFormat.FLAG_USED, 0, 3);
            assertThat(slot(gma, 6)[2]).isZero();
            assertThat(slot(gma, 10_000_000)[2]).isZero(); // never written chunk reads empty
            assertThat(gma.chunkCount()).isEqualTo(3);
        }
    }

    @Test
    void apply_sameLsnTwice_appliedOnce() {
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4)) {
            update(gma, 7, UpdateKinds.RC_ADD, 9, 1);
            update(gma, 7, UpdateKinds.RC_ADD, 9, 1);
            update(gma, 6, UpdateKinds.RC_ADD, 9, 1);
            assertThat(slot(gma, 9)[0]).isEqualTo(1);
        }
    }

    @Test
    void tornWrite_ofNewestFrame_previousFrameSurvives() throws Exception {
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4)) {
            update(gma, 1, UpdateKinds.RC_ADD, 3, 1); // frame A
            gma.sync();
            update(gma, 2, UpdateKinds.RC_ADD, 3, 1); // frame B: the crash comes before its fsync
        }
        // tear frame B (the newest): garbage in its middle
        try (RandomAccessFile f = new RandomAccessFile(dir.resolve("gma.dat").toFile(), "rw")) {
            f.seek(GmaFormat.frameOffset(0, 1) + 5000);
            f.write(new byte[] {1, 2, 3, 4});
        }
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4)) {
            long[] s = slot(gma, 3);
            assertThat(s[0]).isEqualTo(1); // frame A's state, applied LSN 1: replay redoes LSN 2
            assertThat(s[4]).isEqualTo(1);
        }
    }

    @Test
    void bothFramesCorrupt_load_failsWithCorruptError() throws Exception {
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4)) {
            update(gma, 1, UpdateKinds.RC_ADD, 3, 1);
            update(gma, 2, UpdateKinds.RC_ADD, 3, 1);
        }
        try (RandomAccessFile f = new RandomAccessFile(dir.resolve("gma.dat").toFile(), "rw")) {
            f.seek(100);
            f.write(9);
            f.seek(GmaFormat.frameOffset(0, 1) + 100);
            f.write(9);
        }
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4)) {
            assertThatThrownBy(() -> slot(gma, 3)).isInstanceOf(GcCorruptException.class).hasMessageContaining("chunk 0");
        }
    }

    @Test
    void writeWithoutNewLsn_freedMark_survivesReopenWhicheverFrameItLandedIn() {
        for (int extraWrites = 0; extraWrites < 4; extraWrites++) {
            Path d = dir.resolve("w" + extraWrites);
            try (GcMetadataArray gma = GcMetadataArray.open(d, 4)) {
                update(gma, 1, UpdateKinds.RC_ADD, 3, 1);
                for (int i = 0; i < extraWrites; i++) {
                    update(gma, 2 + i, UpdateKinds.RAISE_EXPIRY, 4, 10 + i);
                }
                ReentrantLock l = gma.lock(0);
                l.lock();
                try {
                    GmaChunk c = gma.load(0);
                    c.markFreed(GmaFormat.slotOf(5)); // same applied LSN as the previous write
                    gma.write(c);
                } finally {
                    l.unlock();
                }
                gma.sync();
            }
            try (GcMetadataArray gma = GcMetadataArray.open(d, 4)) {
                assertThat(slot(gma, 5)[2] & GmaFormat.FLAG_FREED).as("after %d extra writes", extraWrites)
                        .isEqualTo(GmaFormat.FLAG_FREED);
                assertThat(slot(gma, 3)[0]).isEqualTo(1);
            }
        }
    }

    @Test
    void cacheEviction_manyChunks_stateSurvives() {
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4)) {
            for (int i = 0; i < 50; i++) {
                update(gma, i + 1, UpdateKinds.RC_ADD, i * (long) GmaFormat.PBNS_PER_CHUNK + 1, i + 1);
            }
            gma.evictAll();
            for (int i = 0; i < 50; i++) {
                assertThat(slot(gma, i * (long) GmaFormat.PBNS_PER_CHUNK + 1)[0]).isEqualTo(i + 1);
            }
        }
    }

    private void flip(long at) throws Exception {
        try (RandomAccessFile f = new RandomAccessFile(dir.resolve("gma.dat").toFile(), "rw")) {
            f.seek(at);
            int b = f.read();
            f.seek(at);
            f.write(b ^ 0x10);
        }
    }

    @Test
    void newestDurableFrameRotted_olderFrameValid_loadRefusedNamingTheChunk() throws Exception {
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4)) {
            update(gma, 1, UpdateKinds.RC_ADD, 3, 1); // frame A
            gma.sync();
            update(gma, 2, UpdateKinds.RC_ADD, 3, 1); // frame B, durable and recorded
            gma.sync();
        }
        flip(GmaFormat.frameOffset(0, 1) + 5000);
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4)) {
            assertThatThrownBy(gma::verify).isInstanceOf(GcCorruptException.class).hasMessageContaining("chunk 0")
                    .hasMessageContaining("newest frame").hasMessageContaining("gma.gen");
        }
    }

    @Test
    void olderFrameRotted_newestValid_readsTheNewest() throws Exception {
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4)) {
            update(gma, 1, UpdateKinds.RC_ADD, 3, 1);
            gma.sync();
            update(gma, 2, UpdateKinds.RC_ADD, 3, 1);
            gma.sync();
        }
        flip(GmaFormat.frameOffset(0, 0) + 5000);
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4)) {
            assertThat(gma.verify()).isEqualTo(1);
            assertThat(slot(gma, 3)[0]).isEqualTo(2);
        }
    }

    @Test
    void recordedChunkZeroedOut_loadRefused() throws Exception {
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4)) {
            update(gma, 1, UpdateKinds.RC_ADD, 3, 1);
            update(gma, 2, UpdateKinds.RC_ADD, GmaFormat.PBNS_PER_CHUNK + 3, 1); // chunk 1 keeps the file long
            gma.sync();
        }
        try (RandomAccessFile f = new RandomAccessFile(dir.resolve("gma.dat").toFile(), "rw")) {
            f.seek(GmaFormat.frameOffset(0, 0));
            f.write(new byte[2 * GmaFormat.CHUNK_BYTES]);
        }
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4)) {
            assertThatThrownBy(gma::verify).isInstanceOf(GcCorruptException.class).hasMessageContaining("chunk 0")
                    .hasMessageContaining("zeros");
        }
    }

    @Test
    void storeWithoutGenerationTable_oneFrameRotted_readsTheOtherAsBefore() throws Exception {
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4)) {
            update(gma, 1, UpdateKinds.RC_ADD, 3, 1);
            update(gma, 2, UpdateKinds.RC_ADD, 3, 1);
            gma.sync();
        }
        java.nio.file.Files.delete(dir.resolve(GmaFormat.GENERATIONS_FILE));
        flip(GmaFormat.frameOffset(0, 1) + 5000);
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4)) {
            assertThat(slot(gma, 3)[0]).isEqualTo(1);
        }
    }
}
