package org.holdfast.gc.gma;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.locks.ReentrantLock;
import java.util.zip.GZIPInputStream;
import org.holdfast.common.id.PbnRange;
import org.holdfast.gc.gma.GmaChunk.UpdateKinds;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A GMA over a PBN range far from 1: chunk indexes count from the range, the range is recorded, and another range is refused. */
class GmaRangeTest {
    private static final long FIRST = 1L << 40;
    private static final PbnRange RANGE = new PbnRange(FIRST, FIRST + (1L << 30));

    @TempDir
    Path dir;

    private static void update(GcMetadataArray gma, long lsn, int kind, long pbn, long value) {
        long c = gma.layout().chunkOf(pbn);
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
        long c = gma.layout().chunkOf(pbn);
        ReentrantLock l = gma.lock(c);
        l.lock();
        try {
            GmaChunk chunk = gma.load(c);
            int s = gma.layout().slotOf(pbn);
            return new long[] {chunk.rc(s), chunk.pins(s), chunk.flags(s), chunk.expiry(s)};
        } finally {
            l.unlock();
        }
    }

    private String filesOf() throws Exception {
        StringBuilder s = new StringBuilder();
        try (var files = Files.list(dir)) {
            for (Path p : files.sorted().toList()) {
                s.append(p.getFileName()).append(':').append(Arrays.hashCode(Files.readAllBytes(p))).append(';');
            }
        }
        return s.toString();
    }

    @Test
    void layout_standalone_isTheLayoutBeforeRanges() {
        for (long pbn : new long[] {0, 1, 8190, 8191, 8192, 123_456_789L}) {
            assertThat(GmaLayout.STANDALONE.chunkOf(pbn)).isEqualTo(GmaFormat.chunkOf(pbn));
            assertThat(GmaLayout.STANDALONE.slotOf(pbn)).isEqualTo(GmaFormat.slotOf(pbn));
        }
        assertThat(GmaLayout.STANDALONE.base()).isZero();
    }

    @Test
    void layout_rangeAt2To40_chunksCountFromTheRangeAndSlotsMapBack() {
        GmaLayout l = new GmaLayout(RANGE);
        assertThat(l.chunkOf(FIRST)).isZero();
        assertThat(l.slotOf(FIRST)).isEqualTo(2); // slot 1 holds first - 1, as slot 1 of a standalone GMA holds PBN 0
        assertThat(l.chunkOf(FIRST + GmaFormat.PBNS_PER_CHUNK - 1)).isEqualTo(1);
        for (long pbn : new long[] {FIRST, FIRST + 1, FIRST + 8190, FIRST + 8191, FIRST + 123_456_789L}) {
            assertThat(l.pbnAt(l.chunkOf(pbn), l.slotOf(pbn))).isEqualTo(pbn);
        }
        assertThat(l.chunksBelow(FIRST + 3)).isEqualTo(1);
    }

    @Test
    void open_rangeAt2To40_updatesLandInLowChunksAndSurviveReopen() throws Exception {
        long far = FIRST + 3L * GmaFormat.PBNS_PER_CHUNK + 5;
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4, RANGE)) {
            update(gma, 1, UpdateKinds.RC_ADD, FIRST, 2);
            update(gma, 2, UpdateKinds.RAISE_EXPIRY, far, 1000);
            gma.sync();
        }
        assertThat(Files.size(dir.resolve(GmaFormat.FILE))).as("4 chunks, not 2^40 / 8191").isEqualTo(4L * GmaFormat.CHUNK_BYTES);
        ByteBuffer range = ByteBuffer.wrap(Files.readAllBytes(dir.resolve(GmaFormat.RANGE_FILE)));
        assertThat(range.capacity()).isEqualTo(24);
        assertThat(range.getInt(0)).isEqualTo(0x48475201);
        assertThat(range.getLong(8)).isEqualTo(RANGE.first());
        assertThat(range.getLong(16)).isEqualTo(RANGE.limit());
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4, RANGE)) {
            gma.evictAll();
            assertThat(gma.verify()).isEqualTo(4);
            assertThat(slot(gma, FIRST)).containsExactly(2, 0, GmaFormat.FLAG_USED, 0);
            assertThat(slot(gma, far)).containsExactly(0, 0, GmaFormat.FLAG_USED, 1000);
            java.util.List<Long> seen = new java.util.ArrayList<>();
            gma.scan(0, (pbn, rc, pins, flags, expiry) -> seen.add(pbn));
            assertThat(seen).containsExactly(FIRST, far);
        }
    }

    @Test
    void open_otherRange_refusedAndNothingChanged() throws Exception {
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4, RANGE)) {
            update(gma, 1, UpdateKinds.RC_ADD, FIRST + 9, 1);
            gma.sync();
        }
        String before = filesOf();
        PbnRange other = new PbnRange(RANGE.limit(), RANGE.limit() + 100);
        assertThatThrownBy(() -> GcMetadataArray.open(dir, 4, other)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(RANGE.toString()).hasMessageContaining(other.toString()).hasMessageContaining("nothing was changed");
        assertThatThrownBy(() -> GcMetadataArray.open(dir, 4)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("standalone");
        assertThat(filesOf()).isEqualTo(before);
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4, RANGE)) {
            assertThat(slot(gma, FIRST + 9)[0]).isEqualTo(1);
        }
    }

    @Test
    void open_standaloneGmaOverRange_refusedAndNoRangeRecordWritten() throws Exception {
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4)) {
            update(gma, 1, UpdateKinds.RC_ADD, 7, 1);
            gma.sync();
        }
        assertThat(Files.exists(dir.resolve(GmaFormat.RANGE_FILE))).as("a standalone GMA's files stay as before").isFalse();
        String before = filesOf();
        assertThatThrownBy(() -> GcMetadataArray.open(dir, 4, RANGE)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("standalone");
        assertThat(filesOf()).isEqualTo(before);
    }

    @Test
    void formatV1Fixture_openedOverRange_refusedAndLeftAsItWas_standaloneStillReads() throws Exception {
        try (InputStream in = new GZIPInputStream(getClass().getResourceAsStream("/fixtures/gma-v1/gma.dat.gz"))) {
            Files.write(dir.resolve(GmaFormat.FILE), in.readAllBytes());
        }
        try (InputStream in = getClass().getResourceAsStream("/fixtures/gma-v1/gma.gen")) {
            Files.write(dir.resolve(GmaFormat.GENERATIONS_FILE), in.readAllBytes());
        }
        String before = filesOf();
        assertThatThrownBy(() -> GcMetadataArray.open(dir, 4, RANGE)).isInstanceOf(IllegalStateException.class);
        assertThat(filesOf()).as("not converted, no range record").isEqualTo(before);
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4)) { // the old format reads as the standalone range
            assertThat(gma.layout()).isEqualTo(GmaLayout.STANDALONE);
            assertThat(slot(gma, 3)).containsExactly(2, 0, GmaFormat.FLAG_USED, 0);
            assertThat(slot(gma, 2L * GmaFormat.PBNS_PER_CHUNK + 7)).containsExactly(0, 0, GmaFormat.FLAG_USED, 1000);
        }
    }

    @Test
    void rangeRecord_damaged_openRefusedAsCorrupt() throws Exception {
        try (GcMetadataArray gma = GcMetadataArray.open(dir, 4, RANGE)) {
            gma.sync();
        }
        byte[] b = Files.readAllBytes(dir.resolve(GmaFormat.RANGE_FILE));
        b[12] ^= 1;
        Files.write(dir.resolve(GmaFormat.RANGE_FILE), b);
        assertThatThrownBy(() -> GcMetadataArray.open(dir, 4, RANGE)).isInstanceOf(org.holdfast.gc.GcCorruptException.class)
                .hasMessageContaining("gc-rebuild");
    }
}
