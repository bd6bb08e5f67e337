package org.holdfast.common.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Protocol version 5 (the snapshot identity at the end of BACKUP_BEGIN and COMMITTED) next to the
 * version 2 forms that a connection of version 4 or less keeps sending and expecting.
 */
class ProtocolVersion5Test {
    private static final long ID = 0x1234_5678_9abc_def0L;
    private final TrackingAllocator alloc = new TrackingAllocator();
    private final FrameDecoder decoder = new FrameDecoder();
    private final EmbeddedChannel ch = new EmbeddedChannel(decoder);

    ProtocolVersion5Test() {
        ch.config().setAllocator(alloc);
    }

    @AfterEach
    void noLeaks() {
        ch.finishAndReleaseAll();
        alloc.assertAllReleased();
    }

    private ByteBuf encode(Message m) {
        ByteBuf out = alloc.buffer();
        FrameEncoder.write(m, out);
        return out;
    }

    private Message decode(ByteBuf frame) {
        ch.writeInbound(frame);
        return ch.readInbound();
    }

    private static int bodyOf(ByteBuf frame) {
        return frame.readableBytes() - ProtocolLimits.LENGTH_FIELD_BYTES - ProtocolLimits.HEADER_BYTES;
    }

    @Test
    void encode_backupBeginWithId_endsWithTheId_andDecodesAtVersion5() {
        decoder.protocolVersion(5);
        ByteBuf f = encode(new BackupBegin("vm", 4096, 8192, 7, ID));
        assertThat(bodyOf(f)).isEqualTo(2 + 2 + 4 + 8 + 8 + 8);
        assertThat(f.getLong(f.writerIndex() - 8)).isEqualTo(ID);
        assertThat(decode(f)).isEqualTo(new BackupBegin("vm", 4096, 8192, 7, ID));
    }

    @Test
    void encode_committedWithId_endsWithTheId_andDecodesAtVersion5() {
        decoder.protocolVersion(5);
        Committed c = new Committed(7, 1_700_000_000_000L, 8192, 2, 2, 1, 100, ID);
        ByteBuf f = encode(c);
        assertThat(bodyOf(f)).isEqualTo(8 * 8);
        assertThat(f.getLong(f.writerIndex() - 8)).isEqualTo(ID);
        assertThat(decode(f)).isEqualTo(c);
    }

    @Test
    void encode_idZero_isTheVersion4Form() {
        // what a version 4 peer sends and expects: no id at all
        ByteBuf begin = encode(new BackupBegin("vm", 4096, 8192, 7, 0));
        assertThat(bodyOf(begin)).isEqualTo(2 + 2 + 4 + 8 + 8);
        ByteBuf committed = encode(new Committed(7, 1, 8192, 2, 2, 1, 100, 0));
        assertThat(bodyOf(committed)).isEqualTo(7 * 8);
        decoder.protocolVersion(4);
        assertThat(decode(begin)).isEqualTo(new BackupBegin("vm", 4096, 8192, 7));
        assertThat(decode(committed)).isEqualTo(new Committed(7, 1, 8192, 2, 2, 1, 100));
    }

    @Test
    void decode_version4FormsAtVersion5_readIdUnknown() {
        decoder.protocolVersion(5);
        assertThat(((BackupBegin) decode(encode(new BackupBegin("vm", 4096, 8192, 7)))).baseSnapshotId()).isZero();
        assertThat(((Committed) decode(encode(new Committed(7, 1, 8192, 2, 2, 1, 100)))).snapshotId()).isZero();
    }

    @Test
    void decode_backupBeginWithIdOnVersion4Connection_badFrame() {
        decoder.protocolVersion(4);
        assertThatThrownBy(() -> decode(encode(new BackupBegin("vm", 4096, 8192, 7, ID))))
                .isInstanceOfSatisfying(ProtocolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.BAD_FRAME))
                .hasMessageContaining("needs protocol version 5");
    }

    @Test
    void decode_committedWithIdOnVersion4Connection_badFrame() {
        decoder.protocolVersion(4);
        assertThatThrownBy(() -> decode(encode(new Committed(7, 1, 8192, 2, 2, 1, 100, ID))))
                .isInstanceOfSatisfying(ProtocolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.BAD_FRAME))
                .hasMessageContaining("agreed on version 4");
    }

    @Test
    void backupReady_fullReason_endsTheFrameAtVersion5_absentWhenUnstatedOrOlder() {
        byte[] secret = new byte[BackupReady.SECRET_BYTES];
        BackupReady full = new BackupReady(9, 3, 4096, BackupMode.FULL, secret, FullReason.IDENTITY_MISMATCH);
        ByteBuf f = encode(full);
        assertThat(bodyOf(f)).isEqualTo(8 + 8 + 4 + 1 + 32 + 1);
        assertThat(f.getByte(f.writerIndex() - 1)).isEqualTo((byte) 3);
        decoder.protocolVersion(5);
        assertThat(decode(f)).isEqualTo(full);
        ByteBuf older = encode(full.forVersion(4));
        assertThat(bodyOf(older)).as("a version 4 agent gets the version 2 frame").isEqualTo(53);
        older.release();
        ByteBuf unstated = encode(new BackupReady(9, 3, 4096, BackupMode.FULL, secret));
        assertThat(bodyOf(unstated)).isEqualTo(53);
        unstated.release();
    }

    @Test
    void decode_backupReadyReasonOnVersion4Connection_orUnknown_badFrame() {
        byte[] secret = new byte[BackupReady.SECRET_BYTES];
        decoder.protocolVersion(4);
        assertThatThrownBy(() -> decode(encode(new BackupReady(9, 3, 4096, BackupMode.FULL, secret, FullReason.DAMAGED_BLOCKS))))
                .isInstanceOfSatisfying(ProtocolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.BAD_FRAME))
                .hasMessageContaining("needs protocol version 5");
    }

    @Test
    void backupReady_reasonWithIncremental_refusedAtConstruction() {
        assertThatThrownBy(() -> new BackupReady(9, 3, 4096, BackupMode.INCREMENTAL, new byte[32], FullReason.BASE_NOT_NEWEST))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void decode_explicitZeroId_badFrame() {
        decoder.protocolVersion(5);
        ByteBuf body = alloc.buffer().writeLong(7).writeLong(1).writeLong(8192).writeLong(2).writeLong(2).writeLong(1)
                .writeLong(100).writeLong(0);
        ByteBuf f = alloc.buffer();
        f.writeInt(2 + body.readableBytes()).writeByte(ProtocolLimits.VERSION).writeByte(MessageType.COMMITTED.code()).writeBytes(body);
        body.release();
        assertThatThrownBy(() -> decode(f))
                .isInstanceOfSatisfying(ProtocolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.BAD_FRAME))
                .hasMessageContaining("is 0");
    }
}
