package org.holdfast.common.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

/** BLOCKS and RESTORE_DATA payload tables parsed directly: a malformed table is refused with its code and keeps nothing of the body. */
class BlockPayloadParserTest {
    private final BlockPayloadParser parser = new BlockPayloadParser();

    @Test
    void parseBlocks_rawPayloadShorterThanBlockSize_refusedAndBodyNotRetained() {
        parser.blockSize(4096);
        ByteBuf b = Unpooled.buffer().writeInt(1).writeLong(7).writeByte(PayloadCodec.RAW).writeInt(100).writeZero(100);
        assertThatThrownBy(() -> parser.parseBlocks(b)).isInstanceOfSatisfying(ProtocolException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.BAD_FRAME);
            assertThat(e.getMessage()).contains("BLOCKS entry 0: raw payload of 100 bytes for block size 4096");
        });
        assertThat(b.refCnt()).isEqualTo(1); // no slice of a refused body survives
        b.release();
    }

    @Test
    void parseBlocks_frameMemberWithoutZstdFrame_refused() {
        parser.protocolVersion(PayloadCodec.FRAMES_SINCE_VERSION);
        ByteBuf b = Unpooled.buffer().writeInt(1).writeLong(3).writeByte(PayloadCodec.FRAME_MEMBER).writeInt(0);
        assertThatThrownBy(() -> parser.parseBlocks(b)).isInstanceOfSatisfying(ProtocolException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.BAD_FRAME);
            assertThat(e.getMessage()).contains("BLOCKS entry 0 (LBN 3) is a frame member without a zstd frame before it");
        });
        assertThat(b.refCnt()).isEqualTo(1);
        b.release();
    }

    @Test
    void parseRestoreData_zstdFrameBeforeProtocol4_refusedNamingTheVersion() {
        parser.protocolVersion(3);
        ByteBuf b = Unpooled.buffer().writeLong(10).writeInt(1).writeByte(PayloadCodec.ZSTD_FRAME).writeZero(32)
                .writeShort(0).writeShort(2).writeInt(5).writeZero(5);
        assertThatThrownBy(() -> parser.parseRestoreData(b)).isInstanceOfSatisfying(ProtocolException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.BAD_FRAME);
            assertThat(e.getMessage()).contains("RESTORE_DATA entry 0 (LBN 10) has codec zstd-frame, which needs protocol version 4");
        });
        assertThat(b.refCnt()).isEqualTo(1);
        b.release();
    }

    @Test
    void parseRestoreData_wellFormed_keepsPayloadsInOneRetainedSlice() {
        parser.blockSize(4096);
        ByteBuf b = Unpooled.buffer().writeLong(10).writeInt(2).writeByte(PayloadCodec.ZERO)
                .writeByte(PayloadCodec.ZSTD).writeZero(32).writeInt(9).writeBytes(new byte[] {1, 2, 3, 4, 5, 6, 7, 8, 9});
        RestoreData r = parser.parseRestoreData(b);
        assertThat(b.isReadable()).isFalse();
        assertThat(r.lengths()).containsExactly(0, 9);
        assertThat(b.refCnt()).isEqualTo(2); // the message's slice
        r.release();
        assertThat(b.refCnt()).isEqualTo(1);
        b.release();
    }
}
