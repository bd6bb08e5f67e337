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

/** The worker counts file's bytes (golden, as docs/architecture.md tables them) and its refusals of damaged files. */
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

    @TempDir
    Path dir;

    private Path writeGolden() {
        Path f = dir.resolve("w2.counts");
        try (WorkerCountsFile.Writer w = new WorkerCountsFile.Writer(f, new WorkerCountsFile.Header(2, RANGE, MARK, 1_780_000_000_000L))) {
            w.add(FIRST, 2, 1, 0);
            w.add(FIRST + 5, 0, 0, 1_780_000_360_000L);
            assertThat(w.finish()).isEqualTo(140);
        }
        return f;
    }

    @Test
    void writer_twoRecords_writesTheGoldenVersion1Bytes() throws Exception {
        Path f = writeGolden();

        assertThat(HexFormat.of().formatHex(Files.readAllBytes(f))).isEqualTo(V1_TWO_RECORDS);
        assertThat(dir.resolve("w2.counts.partial")).doesNotExist();
    }

    @Test
    void read_goldenVersion1Bytes_givesHeaderAndRecords() throws Exception {
        Path f = Files.write(dir.resolve("golden.counts"), HexFormat.of().parseHex(V1_TWO_RECORDS));
        List<long[]> records = new ArrayList<>();

        WorkerCountsFile.Header h = WorkerCountsFile.read(f, (pbn, rc, pins, et) -> records.add(new long[] {pbn, rc, pins, et}));

        assertThat(h).isEqualTo(new WorkerCountsFile.Header(2, RANGE, MARK, 1_780_000_000_000L));
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
