package org.holdfast.common.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import org.holdfast.common.model.Consistency;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Protocol version 3 (COMMIT's consistency, RUN_REPORT) next to the version 2 frames it must keep reading. */
class ProtocolVersion3Test {
    private final TrackingAllocator alloc = new TrackingAllocator();
    private final EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder());

    ProtocolVersion3Test() {
        ch.config().setAllocator(alloc);
    }

    @AfterEach
    void noLeaks() {
        ch.finishAndReleaseAll();
        alloc.assertAllReleased();
    }

    private ByteBuf frame(MessageType type, ByteBuf body) {
        ByteBuf f = alloc.buffer();
        f.writeInt(2 + body.readableBytes()).writeByte(ProtocolLimits.VERSION).writeByte(type.code()).writeBytes(body);
        body.release();
        return f;
    }

    private Message decode(ByteBuf frame) {
        ch.writeInbound(frame);
        return ch.readInbound();
    }

    @Test
    void decode_version2Commit_readsConsistencyUnknown() {
        // the exact bytes a version 2 agent sends: u64 volumeBytes and nothing more
        Message m = decode(frame(MessageType.COMMIT, alloc.buffer().writeLong(4096)));
        assertThat(m).isEqualTo(new Commit(4096, Consistency.UNKNOWN));
    }

    @Test
    void encode_commitWithoutConsistency_isTheVersion2Form() {
        ByteBuf out = alloc.buffer();
        FrameEncoder.write(new Commit(4096), out);
        assertThat(out.readableBytes()).isEqualTo(4 + 2 + 8);
        out.release();
    }

    @Test
    void encode_commitWithConsistency_addsOneByte() {
        ByteBuf out = alloc.buffer();
        FrameEncoder.write(new Commit(4096, Consistency.APPLICATION), out);
        assertThat(out.readableBytes()).isEqualTo(4 + 2 + 9);
        assertThat((int) out.getUnsignedByte(out.writerIndex() - 1)).isEqualTo(2);
        assertThat(decode(out)).isEqualTo(new Commit(4096, Consistency.APPLICATION));
    }

    @Test
    void decode_commitConsistencyZeroOrUnknownCode_badFrame() {
        assertThatThrownBy(() -> decode(frame(MessageType.COMMIT, alloc.buffer().writeLong(1).writeByte(0))))
                .isInstanceOfSatisfying(ProtocolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.BAD_FRAME));
    }

    @Test
    void decode_commitConsistencyThree_badFrame() {
        assertThatThrownBy(() -> decode(frame(MessageType.COMMIT, alloc.buffer().writeLong(1).writeByte(3))))
                .isInstanceOfSatisfying(ProtocolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.BAD_FRAME));
    }

    @Test
    void helloOf_offersTheNewestVersion_andTheFrameHeaderStaysVersion2() {
        Hello h = Hello.of("holdfast-agent/0.1.0@h", "t");
        assertThat(h.protocolVersion()).isEqualTo(ProtocolLimits.PROTOCOL_VERSION).isEqualTo(5);
        ByteBuf out = alloc.buffer();
        FrameEncoder.write(h, out);
        assertThat((int) out.getUnsignedByte(4)).isEqualTo(2);
        assertThat(decode(out)).isEqualTo(h);
    }

    @Test
    void decode_runReportMessageOverItsLimit_limitExceeded() {
        byte[] long1025 = "m".repeat(ProtocolLimits.MAX_RUN_MESSAGE + 1).getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        ByteBuf b = alloc.buffer();
        b.writeShort(1).writeByte('v').writeShort(1).writeByte('s').writeLong(1).writeLong(2).writeByte(1).writeByte(3)
                .writeShort(1).writeLong(0).writeLong(0).writeLong(0).writeByte(0).writeShort(long1025.length).writeBytes(long1025);
        assertThatThrownBy(() -> decode(frame(MessageType.RUN_REPORT, b)))
                .isInstanceOfSatisfying(ProtocolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.LIMIT_EXCEEDED));
    }

    @Test
    void decode_runReportUnknownResult_badFrame() {
        ByteBuf b = alloc.buffer();
        b.writeShort(1).writeByte('v').writeShort(1).writeByte('s').writeLong(1).writeLong(2).writeByte(9).writeByte(3)
                .writeShort(1).writeLong(0).writeLong(0).writeLong(0).writeByte(0).writeShort(0);
        assertThatThrownBy(() -> decode(frame(MessageType.RUN_REPORT, b)))
                .isInstanceOfSatisfying(ProtocolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.BAD_FRAME));
    }

    @Test
    void cut_longMessage_fitsTheLimit() {
        RunReport r = RunReport.cut("v", "schedule", 1, 2, RunReport.Result.FAILED, 5, 70_000, 0, 0, 0, Consistency.CRASH,
                "é".repeat(5000));
        assertThat(r.message().getBytes(java.nio.charset.StandardCharsets.UTF_8)).hasSizeLessThanOrEqualTo(ProtocolLimits.MAX_RUN_MESSAGE);
        assertThat(r.attempts()).isEqualTo(0xffff);
    }
}
