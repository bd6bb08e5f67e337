package org.holdfast.server.gc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.GcDelta;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The worker counts file's bytes (golden, as docs/architecture.md tables them; version 1 still read) and its refusals of damaged files. */
class WorkerCountsFileTest {
    private static final long FIRST = (1L << 48) + (1L << 40);
    private static final PbnRange RANGE = new PbnRange(FIRST, (1L << 48) + 2 * (1L << 40));
    private static final long MARK = GcDelta.deltaId(7, GcDelta.MAX_PART);
    /** Worker 2, its range, mark of operation 7, created 1780000000000, two records; computed outside Java (python struct + hashlib). */
    private static final String V1_TWO_RECORDS = "48465747434e5431000000010000000000000002000101000000000000010200"
            + "0000000000000000007fffff0000019e70448800000101000000000000000002"
            + "000000010000000000000000000101000000000500000000000000000000019e"
            + "704a06400000000000000002f7acc85e3ab618f0035bd9028bf73301f45d927d"
            + "4937ef227f8b263b0417b88a";

    /** Routed mark of operation 6 part 0. */
    private static final long ROUTED = GcDelta.deltaId(6, 0);
    /**
     * As {@link #V1_TWO_RECORDS} in version 2: routed mark 6 × 2^20, 1 outbox entry, 8 reserved zero bytes after the
     * creation time; computed outside Java (python struct + hashlib). Never change it: later releases must read it.
     */
    private static final String V2_TWO_RECORDS = "48465747434e5431000000020000000000000002000101000000000000010200"
            + "0000000000000000007fffff0000019e70448800000000000060000000000000"
            + "0000000100000000000000000001010000000000000000020000000100000000"
            + "00000000000101000000000500000000000000000000019e704a064000000000"
            + "00000002dfb2a2a19e76d92a71486b67e9baf46d48cc00d5749946eb3ffc6fc2"
            + "98f60add";
    private static final WorkerCountsFile.Header V2_HEADER = new WorkerCountsFile.Header(2, RANGE, MARK, 1_780_000_000_000L, ROUTED, 1);

    @TempDir
    Path dir;

    private Path writeGolden() {
        Path f = dir.resolve("w2.counts");
        try (WorkerCountsFile.Writer w = new WorkerCountsFile.Writer(f, V2_HEADER)) {
            w.add(FIRST, 2, 1, 0);
            w.add(FIRST + 5, 0, 0, 1_780_000_360_000L);
            assertThat(w.finish()).isEqualTo(164);
        }
        return f;
    }

    @Test
    void writer_twoRecords_writesTheGoldenVersion2Bytes() throws Exception {
        Path f = writeGolden();

        assertThat(HexFormat.of().formatHex(Files.readAllBytes(f))).isEqualTo(V2_TWO_RECORDS);
        assertThat(dir.resolve("w2.counts.partial")).doesNotExist();
    }

    @Test
    void read_goldenVersion2Bytes_givesRoutedMarkAndOutboxEntries() throws Exception {
        Path f = Files.write(dir.resolve("golden2.counts"), HexFormat.of().parseHex(V2_TWO_RECORDS));
        List<long[]> records = new ArrayList<>();

        WorkerCountsFile.Header h = WorkerCountsFile.read(f, (pbn, rc, pins, et) -> records.add(new long[] {pbn, rc, pins, et}));

        assertThat(h).isEqualTo(V2_HEADER);
        assertThat(h.routedMarkKnown()).isTrue();
        assertThat(records).hasSize(2);
        assertThat(records.get(1)).containsExactly(FIRST + 5, 0, 0, 1_780_000_360_000L);
    }

    @Test
    void readWrite_routedMarkUnknown_roundTripsAsUnknown() {
        Path f = dir.resolve("unknown.counts");
        try (WorkerCountsFile.Writer w = new WorkerCountsFile.Writer(f, new WorkerCountsFile.Header(2, RANGE, MARK, 1))) {
            w.finish();
        }

        WorkerCountsFile.Header h = WorkerCountsFile.verify(f);

        assertThat(h.routedMarkKnown()).isFalse();
        assertThat(h.routedMark()).isEqualTo(WorkerCountsFile.UNKNOWN);
        assertThat(h.outboxEntries()).isEqualTo(WorkerCountsFile.UNKNOWN);
    }

    @Test
    void verify_version2HeaderWithRoutedMarkAboveMarkOrReservedSet_refused() throws Exception {
        byte[] good = HexFormat.of().parseHex(V2_TWO_RECORDS);
        byte[] above = good.clone();
        java.nio.ByteBuffer.wrap(above).putLong(52, MARK + 1);
        byte[] reserved = good.clone();
        reserved[75] = 1;

        assertThatThrownBy(() -> WorkerCountsFile.verify(Files.write(dir.resolve("a.counts"), above)))
                .isInstanceOf(WorkerCountsFile.BadCountsFileException.class).hasMessageContaining("bad version 2 header");
        assertThatThrownBy(() -> WorkerCountsFile.verify(Files.write(dir.resolve("r.counts"), reserved)))
                .isInstanceOf(WorkerCountsFile.BadCountsFileException.class).hasMessageContaining("reserved 1");
    }

    @Test
    void read_goldenVersion1Bytes_givesHeaderAndRecordsRoutedMarkUnknown() throws Exception {
        Path f = Files.write(dir.resolve("golden.counts"), HexFormat.of().parseHex(V1_TWO_RECORDS));
        List<long[]> records = new ArrayList<>();

        WorkerCountsFile.Header h = WorkerCountsFile.read(f, (pbn, rc, pins, et) -> records.add(new long[] {pbn, rc, pins, et}));

        assertThat(h).isEqualTo(new WorkerCountsFile.Header(2, RANGE, MARK, 1_780_000_000_000L));
        assertThat(h.routedMarkKnown()).as("version 1 says nothing of routed deltas").isFalse();
        assertThat(h.outboxEntries()).isEqualTo(WorkerCountsFile.UNKNOWN);
        assertThat(records).hasSize(2);
        assertThat(records.get(0)).containsExactly(FIRST, 2, 1, 0);
        assertThat(records.get(1)).containsExactly(FIRST + 5, 0, 0, 1_780_000_360_000L);
    }

    @Test
    void verify_truncatedOrFlippedOrForeignFile_refusesNamingTheCause() throws Exception {
        byte[] good = HexFormat.of().parseHex(V1_TWO_RECORDS);
        Path truncated = Files.write(dir.resolve("t.counts"), Arrays.copyOf(good, good.length - 24));
        byte[] flipped = good.clone();
        flipped[70] ^= 1; // inside the first record's expiry
        Path corrupt = Files.write(dir.resolve("c.counts"), flipped);
        byte[] magic = good.clone();
        magic[0] = 'X';
        Path foreign = Files.write(dir.resolve("f.counts"), magic);
        Path shortOne = Files.write(dir.resolve("s.counts"), Arrays.copyOf(good, 30));

        assertThatThrownBy(() -> WorkerCountsFile.verify(truncated)).isInstanceOf(WorkerCountsFile.BadCountsFileException.class)
                .hasMessageContaining("records, its size gives").hasMessageContaining("nothing was changed");
        assertThatThrownBy(() -> WorkerCountsFile.verify(corrupt)).isInstanceOf(WorkerCountsFile.BadCountsFileException.class)
                .hasMessageContaining("checksum");
        assertThatThrownBy(() -> WorkerCountsFile.verify(foreign)).isInstanceOf(WorkerCountsFile.BadCountsFileException.class)
                .hasMessageContaining("magic");
        assertThatThrownBy(() -> WorkerCountsFile.verify(shortOne)).isInstanceOf(WorkerCountsFile.BadCountsFileException.class)
                .hasMessageContaining("truncated");
    }

    @Test
    void writer_pbnOutOfOrderOrOutsideRange_refusedAndNoFileLeft() {
        Path f = dir.resolve("bad.counts");
        try (WorkerCountsFile.Writer w = new WorkerCountsFile.Writer(f, new WorkerCountsFile.Header(2, RANGE, MARK, 1))) {
            w.add(FIRST + 3, 1, 0, 0);
            assertThatThrownBy(() -> w.add(FIRST + 3, 1, 0, 0)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> w.add(FIRST - 1, 1, 0, 0)).isInstanceOf(IllegalArgumentException.class);
        }

        assertThat(f).doesNotExist();
        assertThat(dir.resolve("bad.counts.partial")).doesNotExist();
    }
}
