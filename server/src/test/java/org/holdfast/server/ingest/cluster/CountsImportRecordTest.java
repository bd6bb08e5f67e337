package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.Register;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The counts-import record's bytes (a fixture of version 1), its refusals, and what the worker reports at REGISTER from it. */
class CountsImportRecordTest {
    /** Worker 3, PBNs [2^48, 2^48 + 2^40), mark 5 * 2^20 + 7, imported at 1 780 000 000 000 ms. */
    static final String FIXTURE_V1 = "484643490100000003000100000000000000010100000000000000000000500007"
            + "0000019e704488009a6f380a";
    private static final CountsImportRecord.Imported RECORD = new CountsImportRecord.Imported(3,
            new PbnRange(1L << 48, (1L << 48) + (1L << 40)), (5L << 20) + 7, 1_780_000_000_000L);

    @TempDir
    Path dir;

    @Test
    void encode_version1_isTheFixtureAndReadsBack() {
        assertThat(HexFormat.of().formatHex(CountsImportRecord.encode(RECORD))).isEqualTo(FIXTURE_V1);
        CountsImportRecord.write(dir, RECORD);
        assertThat(CountsImportRecord.read(dir)).isEqualTo(RECORD);
        assertThat(CountsImportRecord.read(dir.resolve("none"))).as("never imported").isNull();
    }

    @Test
    void read_damagedOrOtherVersion_refusedAndReportedAsNoImport() throws Exception {
        byte[] v = HexFormat.of().parseHex(FIXTURE_V1);
        Path gc = Files.createDirectories(dir.resolve("gc"));
        for (int at : new int[] {0, 4, 20, 40}) {
            byte[] bad = v.clone();
            bad[at] ^= 1;
            Files.write(gc.resolve(CountsImportRecord.FILE), bad);
            assertThatThrownBy(() -> CountsImportRecord.read(gc)).as("byte " + at).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("is not a counts-import record of version 1");
        }
        Files.write(gc.resolve(CountsImportRecord.FILE), java.util.Arrays.copyOf(v, 44));
        assertThatThrownBy(() -> CountsImportRecord.read(gc)).isInstanceOf(IllegalStateException.class);
        // what the worker then says at REGISTER: nothing imported (its fence stays), the acknowledged mark unknown
        Files.writeString(dir.resolve(AcknowledgedDeltaMark.FILE), "not a number");
        assertThat(WorkerCountsReport.of(gc)).isEqualTo(new Register.Counts(0, 0, Register.Counts.UNKNOWN));
    }

    @Test
    void report_importedAndAcknowledged_bothSent() throws Exception {
        Path gc = Files.createDirectories(dir.resolve("gc"));
        assertThat(WorkerCountsReport.of(gc)).as("a range never GC'd here").isEqualTo(Register.Counts.NONE);
        CountsImportRecord.write(gc, RECORD);
        Files.writeString(dir.resolve(AcknowledgedDeltaMark.FILE), "9\n");
        assertThat(WorkerCountsReport.of(gc)).isEqualTo(new Register.Counts(RECORD.mark(), 1L << 48, 9));
    }
}
