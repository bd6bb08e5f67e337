package org.holdfast.gc.gma;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.InputStream;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.zip.GZIPInputStream;
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
    void tornJournalAppend_chunkInPlaceSurvives_replayRedoesTheRest() throws Exception {
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4)) {
            update(gma, 1, UpdateKinds.RC_ADD, 3, 1);
            gma.sync();
            update(gma, 2, UpdateKinds.RC_ADD, 3, 1); // in the journal only: the crash comes before the sync
        }
        Path journal = dir.resolve(GmaFormat.JOURNAL_FILE);
        assertThat(Files.size(journal)).isEqualTo(GmaFormat.JOURNAL_HEADER_BYTES + GmaFormat.CHUNK_BYTES);
        try (RandomAccessFile f = new RandomAccessFile(journal.toFile(), "rw")) {
            f.setLength(GmaFormat.JOURNAL_HEADER_BYTES + GmaFormat.CHUNK_BYTES / 2); // the append was cut halfway
        }
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4)) {
            long[] s = slot(gma, 3);
            assertThat(s[0]).isEqualTo(1); // the chunk in place, applied LSN 1: replay redoes LSN 2
            assertThat(s[4]).isEqualTo(1);
            assertThat(gma.verify()).isEqualTo(1);
        }
        assertThat(Files.size(journal)).isZero();
    }

    @Test
    void tornWriteInPlace_halfAChunkWritten_mendedFromTheJournal_nothingLost() throws Exception {
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4)) {
            update(gma, 1, UpdateKinds.RC_ADD, 3, 1);
            update(gma, 2, UpdateKinds.RAISE_EXPIRY, GmaFormat.PBNS_PER_CHUNK - 1, 777); // last slot: second half
            gma.sync();
            update(gma, 3, UpdateKinds.RC_ADD, 3, 1);
            update(gma, 4, UpdateKinds.RAISE_EXPIRY, GmaFormat.PBNS_PER_CHUNK - 1, 999);
            // the crash: the journal was forced (close leaves it), the write in place got half way
        }
        byte[] journal = Files.readAllBytes(dir.resolve(GmaFormat.JOURNAL_FILE));
        try (RandomAccessFile f = new RandomAccessFile(dir.resolve(GmaFormat.FILE).toFile(), "rw")) {
            f.seek(GmaFormat.chunkOffset(0));
            f.write(journal, journal.length - GmaFormat.CHUNK_BYTES, GmaFormat.CHUNK_BYTES / 2);
        }
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4)) {
            assertThat(gma.verify()).isEqualTo(1);
            assertThat(slot(gma, 3)).containsExactly(2, 0, GmaFormat.FLAG_USED, 0, 4);
            assertThat(slot(gma, GmaFormat.PBNS_PER_CHUNK - 1)[3]).isEqualTo(999);
        }
        assertThat(Files.size(dir.resolve(GmaFormat.JOURNAL_FILE))).as("journal emptied once mended").isZero();
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4)) {
            assertThat(slot(gma, 3)[0]).as("mended in place, durable").isEqualTo(2);
        }
    }

    @Test
    void sync_emptiesTheJournal_oneChunkPerChunkAtRest() throws Exception {
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4)) {
            for (int i = 0; i < 3; i++) {
                update(gma, i + 1, UpdateKinds.RC_ADD, i * (long) GmaFormat.PBNS_PER_CHUNK + 1, 1);
                update(gma, i + 10, UpdateKinds.RC_ADD, i * (long) GmaFormat.PBNS_PER_CHUNK + 2, 1);
            }
            assertThat(Files.size(dir.resolve(GmaFormat.JOURNAL_FILE))).isEqualTo(6L * (GmaFormat.JOURNAL_HEADER_BYTES + GmaFormat.CHUNK_BYTES));
            gma.evictAll();
            assertThat(slot(gma, 2 * (long) GmaFormat.PBNS_PER_CHUNK + 2)[0]).as("read back from the journal").isEqualTo(1);
            gma.sync();
        }
        assertThat(Files.size(dir.resolve(GmaFormat.JOURNAL_FILE))).isZero();
        assertThat(Files.size(dir.resolve(GmaFormat.FILE))).isEqualTo(3L * GmaFormat.CHUNK_BYTES);
    }

    @Test
    void chunkCorrupt_noJournalCopy_loadFailsWithCorruptError() throws Exception {
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4)) {
            update(gma, 1, UpdateKinds.RC_ADD, 3, 1);
            gma.sync();
        }
        flip(GmaFormat.chunkOffset(0) + 100);
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4)) {
            assertThatThrownBy(() -> slot(gma, 3)).isInstanceOf(GcCorruptException.class).hasMessageContaining("chunk 0")
                    .hasMessageContaining("fails its checksum").hasMessageContaining("gma.gen");
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
    void staleJournalCopy_olderThanTheRecordedGeneration_notUsedForARottedChunk() throws Exception {
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4)) {
            update(gma, 1, UpdateKinds.RC_ADD, 3, 1); // journal only
        }
        Path journal = dir.resolve(GmaFormat.JOURNAL_FILE);
        byte[] stale = Files.readAllBytes(journal);
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4)) { // mends generation 1 in place
            update(gma, 2, UpdateKinds.RC_ADD, 3, 1);
            gma.sync(); // generation 2, durable and recorded
        }
        Files.write(journal, stale); // as if the journal's truncation had been lost
        flip(GmaFormat.chunkOffset(0) + 5000);
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4)) {
            assertThatThrownBy(gma::verify).isInstanceOf(GcCorruptException.class).hasMessageContaining("chunk 0")
                    .hasMessageContaining("fails its checksum").hasMessageContaining("gma.gen");
        }
    }

    @Test
    void staleJournalCopy_chunkInPlaceValid_ignored() throws Exception {
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4)) {
            update(gma, 1, UpdateKinds.RC_ADD, 3, 1);
        }
        Path journal = dir.resolve(GmaFormat.JOURNAL_FILE);
        byte[] stale = Files.readAllBytes(journal);
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4)) {
            update(gma, 2, UpdateKinds.RC_ADD, 3, 1);
            gma.sync();
        }
        Files.write(journal, stale);
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4)) {
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
            f.seek(GmaFormat.chunkOffset(0));
            f.write(new byte[GmaFormat.CHUNK_BYTES]);
        }
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4)) {
            assertThatThrownBy(gma::verify).isInstanceOf(GcCorruptException.class).hasMessageContaining("chunk 0")
                    .hasMessageContaining("zeros");
        }
    }

    /** The fixture: format 1 written by the release before format 2 (see its chunks in {@link #formatV1_opensConverted_newestFramesKept}). */
    private void unpackV1Fixture() throws Exception {
        try (InputStream in = new GZIPInputStream(getClass().getResourceAsStream("/fixtures/gma-v1/gma.dat.gz"))) {
            Files.write(dir.resolve(GmaFormat.FILE), in.readAllBytes());
        }
        try (InputStream in = getClass().getResourceAsStream("/fixtures/gma-v1/gma.gen")) {
            Files.write(dir.resolve(GmaFormat.GENERATIONS_FILE), in.readAllBytes());
        }
    }

    @Test
    void formatV1_opensConverted_newestFramesKept() throws Exception {
        unpackV1Fixture();
        // chunk 0: frame A (LSN 1, gen 1), frame B (LSN 2, gen 2), frame A again (LSN 2, gen 3: pin on 5, 4 FREED);
        // chunk 1 never written; chunk 2: frame A (LSN 3, ET 1000 on its slot 8)
        assertThat(Files.size(dir.resolve(GmaFormat.FILE))).isEqualTo(5L * GmaFormat.CHUNK_BYTES);
        Files.write(dir.resolve(GmaFormat.FILE + ".v2.tmp"), new byte[] {1, 2, 3}); // a conversion a crash cut short
        for (int open = 0; open < 2; open++) {
            try (GcMetadataArray gma = GcMetadataArray.open(dir, 4)) {
                assertThat(gma.verify()).isEqualTo(3);
                long lsn = open == 0 ? 2 : 4;
                assertThat(slot(gma, 3)).containsExactly(open == 0 ? 2 : 3, 0, GmaFormat.FLAG_USED, 0, lsn);
                assertThat(slot(gma, 5)).containsExactly(0, 1, GmaFormat.FLAG_USED, 0, lsn);
                assertThat(slot(gma, 4)[2]).isEqualTo(GmaFormat.FLAG_USED | GmaFormat.FLAG_FREED);
                assertThat(slot(gma, GmaFormat.PBNS_PER_CHUNK + 1)[2]).isZero();
                assertThat(slot(gma, 2L * GmaFormat.PBNS_PER_CHUNK + 7)).containsExactly(0, 0, GmaFormat.FLAG_USED, 1000, 3);
                if (open == 0) {
                    update(gma, 4, UpdateKinds.RC_ADD, 3, 1);
                    gma.sync();
                    update(gma, 3, UpdateKinds.RC_ADD, 3, -1); // LSN not above: ignored
                    gma.sync();
                }
            }
            assertThat(Files.size(dir.resolve(GmaFormat.FILE))).as("one chunk each").isEqualTo(3L * GmaFormat.CHUNK_BYTES);
            assertThat(Files.exists(dir.resolve(GmaFormat.FILE + ".v2.tmp"))).isFalse();
        }
    }

    @Test
    void formatV1_opened_conversionLoggedOnceWithRollbackAdvice() throws Exception {
        unpackV1Fixture();
        Logger jul = Logger.getLogger(GcMetadataArray.class.getName()); // System.Logger's backend in this module
        List<String> lines = new ArrayList<>();
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord r) {
                lines.add(r.getMessage());
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        jul.addHandler(capture);
        try {
            for (int open = 0; open < 2; open++) {
                try (GcMetadataArray gma = GcMetadataArray.open(dir, 4)) {
                    assertThat(gma.verify()).isEqualTo(3);
                }
            }
        } finally {
            jul.removeHandler(capture);
        }
        // the upgrade says what it converted and that an older release cannot open the result; the second open is quiet
        assertThat(lines).hasSize(1);
        assertThat(lines.get(0)).contains("upgraded GC metadata", "from format 1 to format 2", "3 chunks",
                5L * GmaFormat.CHUNK_BYTES + " -> " + 3L * GmaFormat.CHUNK_BYTES + " bytes", "cannot open", "Upgrading");
    }

    @Test
    void formatV1_newestDurableFrameRotted_refusedAndLeftAsItWas() throws Exception {
        unpackV1Fixture();
        flip(5000); // chunk 0 frame A: generation 3, recorded durable; frame B (generation 2) is older
        byte[] before = Files.readAllBytes(dir.resolve(GmaFormat.FILE));
        assertThatThrownBy(() -> GcMetadataArray.open(dir, 4)).isInstanceOf(GcCorruptException.class)
                .hasMessageContaining("chunk 0").hasMessageContaining("newest frame").hasMessageContaining("gma.gen");
        assertThat(Files.readAllBytes(dir.resolve(GmaFormat.FILE))).isEqualTo(before);
    }
}
