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
    void parseBlocks_frameMemberWithPayloadLength_refusedNamingTheEntry() {
        parser.protocolVersion(PayloadCodec.FRAMES_SINCE_VERSION);
        ByteBuf b = Unpooled.buffer().writeInt(2).writeLong(3).writeByte(PayloadCodec.ZSTD_FRAME).writeInt(5).writeZero(5)
                .writeLong(4).writeByte(PayloadCodec.FRAME_MEMBER).writeInt(5);
        assertThatThrownBy(() -> parser.parseBlocks(b)).isInstanceOfSatisfying(ProtocolException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.BAD_FRAME);
            assertThat(e.getMessage()).contains("BLOCKS entry 1 (LBN 4): a frame member carries no payload, got length 5");
        });
        b.release();
    }

    /** The server parses every uploaded block here: a well-formed message costs its tables, no text per entry. */
    @Test
    void parseBlocks_1024Entries_allocatesOnlyItsTables() {
        parser.protocolVersion(PayloadCodec.FRAMES_SINCE_VERSION);
        parser.blockSize(4096);
        ByteBuf body = Unpooled.buffer().writeInt(1024);
        long lbn = 100;
        for (int f = 0; f < 8; f++) {
            body.writeLong(lbn++).writeByte(PayloadCodec.ZSTD_FRAME).writeInt(100).writeZero(100);
            for (int m = 1; m < 64; m++) {
                body.writeLong(lbn++).writeByte(PayloadCodec.FRAME_MEMBER).writeInt(0);
            }
        }
        for (int i = 0; i < 512; i++) {
            body.writeLong(lbn++).writeByte(i % 2 == 0 ? PayloadCodec.ZSTD : PayloadCodec.RAW).writeInt(i % 2 == 0 ? 10 : 4096)
                    .writeZero(i % 2 == 0 ? 10 : 4096);
        }
        parser.parseBlocks(body.duplicate()).release(); // loads and links the classes once
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory
                .getThreadMXBean();
        long before = threads.getCurrentThreadAllocatedBytes();
        Blocks m = parser.parseBlocks(body.duplicate());
        long allocated = threads.getCurrentThreadAllocatedBytes() - before;
        assertThat(m.lengths()[1023]).isEqualTo(4096);
        m.release();
        body.release();
        // the tables: 1024 x (lbn 8 + codec 1 + offset 4 + length 4) = 17 KiB; a text per entry was 100 KiB more
        assertThat(allocated).isLessThan(24 * 1024);
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
