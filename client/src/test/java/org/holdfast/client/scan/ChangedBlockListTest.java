package org.holdfast.client.scan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.StringReader;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;
import org.junit.jupiter.api.Test;

class ChangedBlockListTest {
    static final long VOLUME = 1_000_000;

    private static ChangedBlockList parse(String text) throws Exception {
        return ChangedBlockList.parse(new BufferedReader(new StringReader(text)), "list", VOLUME, 4096);
    }

    @Test
    void parse_unsortedOverlappingRanges_mergedWholeBlocks() throws Exception {
        ChangedBlockList l = parse("# header\n\n8192 100   # inside block 2\n0 1\n4096 4096\n 40960\t8192 \n");
        assertThat(l.extents()).isEqualTo(2);
        assertThat(l.start(0)).isEqualTo(0);
        assertThat(l.end(0)).isEqualTo(3);
        assertThat(l.start(1)).isEqualTo(10);
        assertThat(l.end(1)).isEqualTo(12);
        assertThat(l.blocks()).isEqualTo(5);
    }

    @Test
    void parse_rangeToVolumeEnd_includesPartialLastBlock() throws Exception {
        ChangedBlockList l = parse((VOLUME - 10) + " 10\n");
        assertThat(l.end(0)).isEqualTo((VOLUME + 4095) / 4096);
    }

    @Test
    void parse_empty_noExtents() throws Exception {
        assertThat(parse("# nothing changed\n").extents()).isZero();
    }

    @Test
    void parse_rangeBeyondVolume_usageErrorNamingLine() {
        assertThatThrownBy(() -> parse("0 10\n" + (VOLUME - 5) + " 6\n"))
                .isInstanceOfSatisfying(AgentException.class, e -> assertThat(e.exitCode()).isEqualTo(ExitCode.USAGE))
                .hasMessageContaining("line 2");
    }

    @Test
    void parse_zeroLength_usageError() {
        assertThatThrownBy(() -> parse("0 0\n")).isInstanceOf(AgentException.class).hasMessageContaining("length > 0");
    }

    @Test
    void parse_negativeStart_usageError() {
        assertThatThrownBy(() -> parse("-1 10\n")).isInstanceOf(AgentException.class);
    }

    @Test
    void parse_garbage_usageError() {
        assertThatThrownBy(() -> parse("12 abc\n")).isInstanceOf(AgentException.class).hasMessageContaining("line 1");
        assertThatThrownBy(() -> parse("12\n")).isInstanceOf(AgentException.class).hasMessageContaining("START_BYTE LENGTH");
        assertThatThrownBy(() -> parse("1 2 3\n")).isInstanceOf(AgentException.class);
    }

    @Test
    void parse_overflowingRange_usageError() {
        assertThatThrownBy(() -> parse("10 " + Long.MAX_VALUE + "\n")).isInstanceOf(AgentException.class);
    }
}
