package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HexFormat;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.common.protocol.StaleMarks;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A worker's stale marks outbox: golden bytes of a part, parts of at most one frame, kept across a reopen, a damaged part dropped. */
class StaleMarkOutboxTest {
    private static final String GOLDEN = "4846534d" + "01" + "00000001" + "0000010000000003" + "ab".repeat(32) + "81ab624b";

    @TempDir
    Path dir;

    @Test
    void onePart_goldenBytes_readBack_keptAcrossReopen_deleted() throws Exception {
        Path box = dir.resolve("stale-marks");
        StaleMarkOutbox o = new StaleMarkOutbox(box);
        byte[] fp = new byte[32];
        Arrays.fill(fp, (byte) 0xAB);
        o.add(new long[] {(1L << 40) + 3}, fp, 1);
        Path f = box.resolve("0000000000000001.marks");
        assertThat(HexFormat.of().formatHex(Files.readAllBytes(f))).as("magic HFSM, version 1, count, PBN, fingerprint, CRC32C")
                .isEqualTo(GOLDEN);
        assertThat(o.read(1)).isEqualTo(new StaleMarks(1, 1, new long[] {(1L << 40) + 3}, fp));

        StaleMarkOutbox reopened = new StaleMarkOutbox(box);
        assertThat(reopened.pending()).as("a restarted worker still has it").containsExactly(1L);
        reopened.add(new long[] {9}, fp, 1);
        assertThat(reopened.pending()).as("ids go on after the highest").containsExactly(1L, 2L);
        reopened.delete(1);
        assertThat(reopened.oldest()).isEqualTo(2);
        assertThat(f).doesNotExist();
    }

    @Test
    void moreThanOneFrame_splitIntoParts_inOrder() {
        StaleMarkOutbox o = new StaleMarkOutbox(dir);
        int n = ProtocolLimits.MAX_DEDUP_ENTRIES + 3;
        long[] pbns = new long[n];
        for (int i = 0; i < n; i++) {
            pbns[i] = 100 + i;
        }
        o.add(pbns, new byte[n * 32], n);
        assertThat(o.pending()).containsExactly(1L, 2L);
        assertThat(o.read(1).count()).isEqualTo(ProtocolLimits.MAX_DEDUP_ENTRIES);
        StaleMarks second = o.read(2);
        assertThat(second.pbns()).containsExactly(100L + ProtocolLimits.MAX_DEDUP_ENTRIES, 101L + ProtocolLimits.MAX_DEDUP_ENTRIES,
                102L + ProtocolLimits.MAX_DEDUP_ENTRIES);
    }

    @Test
    void damagedPart_droppedWithoutThrowing_othersKept() throws Exception {
        StaleMarkOutbox o = new StaleMarkOutbox(dir);
        o.add(new long[] {5}, new byte[32], 1);
        o.add(new long[] {6}, new byte[32], 1);
        Path f = dir.resolve("0000000000000001.marks");
        byte[] b = Files.readAllBytes(f);
        b[12] ^= 1; // a bit of the PBN: the CRC no longer matches
        Files.write(f, b);
        assertThat(o.read(1)).isNull();
        assertThat(o.dropped()).isEqualTo(1);
        assertThat(o.pending()).containsExactly(2L);
        assertThat(o.read(2).pbns()).containsExactly(6L);
    }
}
