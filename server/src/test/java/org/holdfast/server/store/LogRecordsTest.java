package org.holdfast.server.store;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.luben.zstd.Zstd;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The highest PBN of a data log read from its record headers alone: block and frame records, a member map's span, a torn tail and where the walk stops. */
class LogRecordsTest {
    private static final int BLOCK = 4096;

    @TempDir
    Path dir;

    @Test
    void maxPbn_blocksAndFrames_equalsTheLastPbnHandedOut_andStopsAtATornTail() throws Exception {
        Path data = dir.resolve("data");
        long last;
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"));
             DataStore store = DataStore.open(new DataStore.Settings(data, 256L << 20, FsyncPolicy.COMMIT, 16, 0), db)) {
            for (long s = 1; s <= 5; s++) {
                byte[] b = DataStoreFrameTest.block(s);
                store.append(DataStoreFrameTest.sha(b), 0, b, 0, BLOCK, FormatVersions.CODEC_RAW, BLOCK);
            }
            byte[] raw = new byte[3 * BLOCK];
            byte[] fps = new byte[3 * 32];
            for (int k = 0; k < 3; k++) {
                byte[] b = DataStoreFrameTest.block(10 + k);
                System.arraycopy(b, 0, raw, k * BLOCK, BLOCK);
                System.arraycopy(DataStoreFrameTest.sha(b), 0, fps, k * 32, 32);
            }
            byte[] z = Zstd.compress(raw, 1);
            long first = store.appendFrame(fps, 0, 3, z, 0, z.length, BLOCK);
            store.sync();
            last = first + 2;
            assertThat(store.nextPbn()).isEqualTo(last + 1);
        }
        Path log = data.resolve(DataLog.fileName(1));
        assertThat(LogRecords.maxPbn(log)).isEqualTo(last);
        long whole = Files.size(log);
        assertThat(LogRecords.walk(log, (pbn, offset, lengthField) -> { })).as("a log of whole records is read to its end").isEqualTo(whole);

        // a torn record past the end: a header whose checksum does not hold is where the walk stops
        byte[] torn = new byte[40];
        Bytes.putInt(torn, 0, FormatVersions.RECORD_MAGIC);
        Bytes.putLong(torn, 8, last + 1000);
        Files.write(log, torn, StandardOpenOption.APPEND);
        assertThat(LogRecords.maxPbn(log)).isEqualTo(last);
        assertThat(LogRecords.walk(log, (pbn, offset, lengthField) -> { })).as("the walk says where it stopped").isEqualTo(whole);
    }

    @Test
    void maxPbn_frameWithMemberMap_takesItsSpan() throws Exception {
        // a log header, then one frame of 2 members over a span of 9 PBNs (100 and 108), as compaction repacks
        byte[] log = new byte[FormatVersions.DATA_LOG_HEADER_BYTES + FormatVersions.RECORD_HEADER_BYTES + 16];
        Bytes.putInt(log, 0, FormatVersions.DATA_LOG_MAGIC);
        int h = FormatVersions.DATA_LOG_HEADER_BYTES;
        Bytes.putInt(log, h, FormatVersions.FRAME_MAGIC);
        log[h + 4] = (byte) FormatVersions.CODEC_ZSTD;
        log[h + 5] = 1; // a member map precedes the frame
        Bytes.putShort(log, h + 6, 2);
        Bytes.putLong(log, h + 8, 100);
        Bytes.putInt(log, h + 16, 2 * BLOCK);
        Bytes.putInt(log, h + 20, 16);
        CRC32C crc = new CRC32C();
        crc.update(log, h, 28);
        Bytes.putInt(log, h + 28, (int) crc.getValue());
        Bytes.putShort(log, h + 32, 9);
        log[h + 34] = 1;
        log[h + 35] = 1;
        Path file = Files.write(dir.resolve("log-00000001.hfl"), log);
        assertThat(LogRecords.maxPbn(file)).isEqualTo(108);
        Files.write(file, Arrays.copyOf(log, h)); // no record at all
        assertThat(LogRecords.maxPbn(file)).isZero();
    }
}
