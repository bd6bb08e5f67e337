package org.holdfast.common.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class FrameDecoderViolationTest {
    private final TrackingAllocator alloc = new TrackingAllocator();
    private final FrameDecoder decoder = new FrameDecoder();
    private final EmbeddedChannel ch = new EmbeddedChannel(decoder);

    {
        ch.config().setAllocator(alloc);
    }

    @AfterEach
    void noLeaks() {
        ch.finishAndReleaseAll();
        alloc.assertAllReleased();
    }

    /** A frame with the given version, type and body, length computed. */
    private ByteBuf frame(int version, int type, ByteBuf body) {
        ByteBuf f = alloc.buffer();
        f.writeInt(2 + body.readableBytes()).writeByte(version).writeByte(type).writeBytes(body);
        body.release();
        return f;
    }

    private ByteBuf body() {
        return alloc.buffer();
    }

    private void assertViolation(ByteBuf input, ErrorCode expected) {
        assertThatThrownBy(() -> ch.writeInbound(input))
                .isInstanceOfSatisfying(ProtocolException.class, e -> assertThat(e.code()).isEqualTo(expected));
        assertThat(decoder.isFailed()).isTrue();
        // After a violation everything is discarded until disconnect, valid frames included.
        ByteBuf valid = alloc.buffer();
        FrameEncoder.write(new Commit(1), valid);
        assertThat(ch.writeInbound(valid)).isFalse();
        assertThat((Object) ch.readInbound()).isNull();
    }

    @Test
    void decode_badVersion_unsupportedVersion() {
        assertViolation(frame(1, MessageType.COMMIT.code(), body().writeLong(1)), ErrorCode.UNSUPPORTED_VERSION);
    }

    @Test
    void decode_badVersionBeforeBodyArrives_failsEarly() {
        ByteBuf header = alloc.buffer().writeInt(1000).writeByte(9);
        assertViolation(header, ErrorCode.UNSUPPORTED_VERSION);
    }

    @Test
    void decode_unknownType_badFrame() {
        assertViolation(frame(ProtocolLimits.VERSION, 0x7f, body().writeLong(1)), ErrorCode.BAD_FRAME);
    }

    @Test
    void decode_truncatedBody_badFrame() {
        assertViolation(frame(ProtocolLimits.VERSION, MessageType.COMMIT.code(), body().writeInt(1)), ErrorCode.BAD_FRAME);
    }

    @Test
    void decode_truncatedFingerprints_badFrame() {
        assertViolation(frame(ProtocolLimits.VERSION, MessageType.ENTRIES.code(), body().writeLong(0).writeInt(2).writeZero(40)), ErrorCode.BAD_FRAME);
    }

    @Test
    void decode_trailingBytes_badFrame() {
        ByteBuf b = body().writeShort(1).writeByte('v').writeByte(0);
        assertViolation(frame(ProtocolLimits.VERSION, MessageType.LIST_SNAPSHOTS.code(), b), ErrorCode.BAD_FRAME);
    }

    @Test
    void decode_fixedSizeBodyTooLong_limitExceeded() {
        assertViolation(frame(ProtocolLimits.VERSION, MessageType.COMMIT.code(), body().writeLong(1).writeShort(0)), ErrorCode.LIMIT_EXCEEDED);
    }

    @Test
    void decode_lengthShorterThanHeader_badFrame() {
        assertViolation(alloc.buffer().writeInt(1).writeByte(1), ErrorCode.BAD_FRAME);
    }

    @Test
    void decode_lengthOverMaxFrame_limitExceededBeforeBuffering() {
        ByteBuf onlyLength = alloc.buffer().writeInt(ProtocolLimits.MAX_FRAME + 1);
        assertViolation(onlyLength, ErrorCode.LIMIT_EXCEEDED);
        assertThat(alloc.largest()).isLessThan(1024);
    }

    @Test
    void decode_lengthNearFourGiB_limitExceeded() {
        assertViolation(alloc.buffer().writeInt(-1), ErrorCode.LIMIT_EXCEEDED);
    }

    @Test
    void decode_smallTypeClaimingHugeBody_limitExceededBeforeBuffering() {
        ByteBuf header = alloc.buffer().writeInt(ProtocolLimits.MAX_FRAME).writeByte(ProtocolLimits.VERSION).writeByte(MessageType.COMMIT.code());
        assertViolation(header, ErrorCode.LIMIT_EXCEEDED);
    }

    @Test
    void decode_volumeNameOverMax_limitExceeded() {
        byte[] name = "v".repeat(ProtocolLimits.MAX_VOLUME_NAME + 1).getBytes(StandardCharsets.UTF_8);
        assertViolation(frame(ProtocolLimits.VERSION, MessageType.LIST_SNAPSHOTS.code(), body().writeShort(name.length).writeBytes(name)),
                ErrorCode.LIMIT_EXCEEDED);
    }

    @Test
    void decode_agentNameOverMax_limitExceeded() {
        byte[] name = "a".repeat(ProtocolLimits.MAX_AGENT_NAME + 1).getBytes(StandardCharsets.UTF_8);
        ByteBuf b = body().writeInt(ProtocolLimits.MAGIC).writeShort(1).writeShort(name.length).writeBytes(name).writeShort(0);
        assertViolation(frame(ProtocolLimits.VERSION, MessageType.HELLO.code(), b), ErrorCode.LIMIT_EXCEEDED);
    }

    @Test
    void decode_badMagic_badFrame() {
        ByteBuf b = body().writeInt(0x12345678).writeShort(1).writeShort(0).writeShort(0);
        assertViolation(frame(ProtocolLimits.VERSION, MessageType.HELLO.code(), b), ErrorCode.BAD_FRAME);
    }

    @Test
    void decode_entriesCountOverMax_limitExceeded() {
        ByteBuf b = body().writeLong(0).writeInt(ProtocolLimits.MAX_RUN_ENTRIES + 1);
        assertViolation(frame(ProtocolLimits.VERSION, MessageType.ENTRIES.code(), b), ErrorCode.LIMIT_EXCEEDED);
    }

    @Test
    void decode_blocksCountOverMax_limitExceeded() {
        ByteBuf b = body().writeInt(ProtocolLimits.MAX_BLOCKS_PER_FRAME + 1);
        assertViolation(frame(ProtocolLimits.VERSION, MessageType.BLOCKS.code(), b), ErrorCode.LIMIT_EXCEEDED);
    }

    @Test
    void decode_snapshotListCountOverMax_limitExceeded() {
        ByteBuf b = body().writeInt(-1);
        assertViolation(frame(ProtocolLimits.VERSION, MessageType.SNAPSHOT_LIST.code(), b), ErrorCode.LIMIT_EXCEEDED);
    }

    @Test
    void decode_rawPayloadOverBlockSize_limitExceeded() {
        decoder.blockSize(4096);
        ByteBuf b = body().writeInt(1).writeLong(0).writeByte(PayloadCodec.RAW).writeInt(8192).writeZero(8192);
        assertViolation(frame(ProtocolLimits.VERSION, MessageType.BLOCKS.code(), b), ErrorCode.LIMIT_EXCEEDED);
    }

    @Test
    void decode_zstdPayloadOverBlockSizePlusSlack_limitExceeded() {
        decoder.blockSize(4096);
        int len = 4096 + ProtocolLimits.ZSTD_SLACK + 1;
        ByteBuf b = body().writeInt(1).writeLong(0).writeByte(PayloadCodec.ZSTD).writeInt(len).writeZero(len);
        assertViolation(frame(ProtocolLimits.VERSION, MessageType.BLOCKS.code(), b), ErrorCode.LIMIT_EXCEEDED);
    }

    @Test
    void decode_payloadOverAbsoluteLimitWithoutBlockSize_limitExceeded() {
        // No payload bytes follow: the length alone is refused.
        ByteBuf b = body().writeInt(1).writeLong(0).writeByte(PayloadCodec.RAW).writeInt(ProtocolLimits.MAX_BLOCK_SIZE + 1);
        assertViolation(frame(ProtocolLimits.VERSION, MessageType.BLOCKS.code(), b), ErrorCode.LIMIT_EXCEEDED);
    }

    @Test
    void decode_rawPayloadShorterThanBlockSize_badFrame() {
        decoder.blockSize(4096);
        ByteBuf b = body().writeInt(1).writeLong(0).writeByte(PayloadCodec.RAW).writeInt(100).writeZero(100);
        assertViolation(frame(ProtocolLimits.VERSION, MessageType.BLOCKS.code(), b), ErrorCode.BAD_FRAME);
    }

    @Test
    void decode_restoreDataPayloadOverLimit_limitExceeded() {
        decoder.blockSize(4096);
        ByteBuf b = body().writeLong(0).writeInt(1).writeByte(PayloadCodec.ZSTD).writeZero(32).writeInt(9000).writeZero(9000);
        assertViolation(frame(ProtocolLimits.VERSION, MessageType.RESTORE_DATA.code(), b), ErrorCode.LIMIT_EXCEEDED);
    }

    @Test
    void decode_zeroCodecInBlocks_badFrame() {
        ByteBuf b = body().writeInt(1).writeLong(0).writeByte(PayloadCodec.ZERO).writeInt(0);
        assertViolation(frame(ProtocolLimits.VERSION, MessageType.BLOCKS.code(), b), ErrorCode.BAD_FRAME);
    }

    @Test
    void decode_unknownCodecInRestoreData_badFrame() {
        ByteBuf b = body().writeLong(0).writeInt(1).writeByte(7);
        assertViolation(frame(ProtocolLimits.VERSION, MessageType.RESTORE_DATA.code(), b), ErrorCode.BAD_FRAME);
    }

    @Test
    void decode_needPaddingBitsSet_badFrame() {
        ByteBuf b = body().writeLong(0).writeInt(3).writeByte(0xff);
        assertViolation(frame(ProtocolLimits.VERSION, MessageType.NEED.code(), b), ErrorCode.BAD_FRAME);
    }

    @Test
    void decode_unknownBackupMode_badFrame() {
        ByteBuf b = body().writeLong(1).writeLong(0).writeInt(4096).writeByte(5);
        assertViolation(frame(ProtocolLimits.VERSION, MessageType.BACKUP_READY.code(), b), ErrorCode.BAD_FRAME);
    }

    @Test
    void decode_entriesWithoutTags_badFrame() {
        // a version-1 style body: fingerprints but no possession tags
        ByteBuf b = body().writeLong(0).writeInt(2).writeZero(2 * 32);
        assertViolation(frame(ProtocolLimits.VERSION, MessageType.ENTRIES.code(), b), ErrorCode.BAD_FRAME);
    }

    @Test
    void decode_backupReadyWithoutSecret_badFrame() {
        ByteBuf b = body().writeLong(1).writeLong(0).writeInt(4096).writeByte(0).writeZero(BackupReady.SECRET_BYTES - 1);
        assertViolation(frame(ProtocolLimits.VERSION, MessageType.BACKUP_READY.code(), b), ErrorCode.BAD_FRAME);
    }

    @Test
    void decode_entriesBodyOverItsLimit_limitExceededBeforeBuffering() {
        ByteBuf b = alloc.buffer().writeInt(2 + 8 + 4 + ProtocolLimits.MAX_RUN_ENTRIES * Entries.ENTRY_BYTES + 1)
                .writeByte(ProtocolLimits.VERSION).writeByte(MessageType.ENTRIES.code());
        assertViolation(b, ErrorCode.LIMIT_EXCEEDED);
    }

    @Test
    void decode_negativeLbn_badFrame() {
        ByteBuf b = body().writeLong(-5).writeInt(1).writeZero(Entries.ENTRY_BYTES);
        assertViolation(frame(ProtocolLimits.VERSION, MessageType.ENTRIES.code(), b), ErrorCode.BAD_FRAME);
    }

    @Test
    void decode_validFrameThenViolation_firstDeliveredThenFails() {
        ByteBuf both = alloc.buffer();
        FrameEncoder.write(new Commit(7), both);
        both.writeInt(10).writeByte(1).writeByte(0x7e).writeLong(0);
        assertThatThrownBy(() -> ch.writeInbound(both)).isInstanceOf(ProtocolException.class);
        assertThat((Object) ch.readInbound()).isEqualTo(new Commit(7));
    }

    private ByteBuf heartbeatBody() {
        return body().writeLong(1).writeInt(0).writeLong(0).writeLong(0).writeLong(0);
    }

    @Test
    void decode_heartbeatWithPartialRangeReport_badFrame() {
        assertViolation(frame(ProtocolLimits.VERSION, MessageType.HEARTBEAT.code(), heartbeatBody().writeByte(1).writeInt(7)),
                ErrorCode.BAD_FRAME);
    }

    @Test
    void decode_heartbeatWithUnknownRangeState_badFrame() {
        assertViolation(frame(ProtocolLimits.VERSION, MessageType.HEARTBEAT.code(), heartbeatBody().writeByte(3).writeLong(0).writeLong(0)),
                ErrorCode.BAD_FRAME);
    }

    @Test
    void decode_heartbeatRefusedRangeWithFigures_badFrame() {
        assertViolation(frame(ProtocolLimits.VERSION, MessageType.HEARTBEAT.code(), heartbeatBody().writeByte(2).writeLong(5).writeLong(0)),
                ErrorCode.BAD_FRAME);
    }

    @Test
    void decode_heartbeatPastItsReportsArchiveEpoch_limitExceeded() {
        assertViolation(frame(ProtocolLimits.VERSION, MessageType.HEARTBEAT.code(), heartbeatBody().writeByte(1).writeLong(9).writeLong(0)
                .writeLong(2).writeByte(0)), ErrorCode.LIMIT_EXCEEDED);
    }

    @Test
    void decode_heartbeatWithPartialArchiveEpoch_badFrame() {
        assertViolation(frame(ProtocolLimits.VERSION, MessageType.HEARTBEAT.code(), heartbeatBody().writeByte(1).writeLong(9).writeLong(0)
                .writeByte(0)), ErrorCode.BAD_FRAME);
    }

    /** A REGISTERED body up to masterVersion, then version 5's PBN floor: what a version 5 master sends before its lost-after. */
    private ByteBuf registeredBodyWithFloor() {
        ByteBuf b = body().writeInt(1).writeLong(1).writeLong(1L << 48).writeLong((1L << 48) + 10).writeInt(100);
        FrameEncoder.writeStr(b, "m");
        return b.writeLong(1L << 48);
    }

    @Test
    void decode_registeredWithFloorButNoLostAfter_badFrame() {
        assertViolation(frame(ProtocolLimits.VERSION, MessageType.REGISTERED.code(), registeredBodyWithFloor()), ErrorCode.BAD_FRAME);
    }

    @Test
    void decode_registeredWithPartialLostAfter_badFrame() {
        assertViolation(frame(ProtocolLimits.VERSION, MessageType.REGISTERED.code(), registeredBodyWithFloor().writeShort(0)),
                ErrorCode.BAD_FRAME);
    }

    @Test
    void decode_registeredWithNonsenseLostAfter_badFrameNamingIt() {
        // 0, what a negative int would be on the wire, and a day plus 1 ms
        for (long millis : new long[] {0, 0xffff_ffffL, 0x8000_0000L, Registered.MAX_LOST_AFTER_MILLIS + 1}) {
            FrameDecoder d = new FrameDecoder();
            EmbeddedChannel c = new EmbeddedChannel(d);
            c.config().setAllocator(alloc);
            ByteBuf f = frame(ProtocolLimits.VERSION, MessageType.REGISTERED.code(), registeredBodyWithFloor().writeInt((int) millis));
            assertThatThrownBy(() -> c.writeInbound(f)).as("lost-after %d ms", millis)
                    .isInstanceOfSatisfying(ProtocolException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.BAD_FRAME))
                    .hasMessageContaining("lostAfterMillis").hasMessageContaining("holdfast.cluster.lost-after");
            assertThat(d.isFailed()).isTrue();
            c.finishAndReleaseAll();
        }
    }

    @Test
    void decode_registeredWithLostAfterOfADay_accepted() {
        ch.writeInbound(frame(ProtocolLimits.VERSION, MessageType.REGISTERED.code(),
                registeredBodyWithFloor().writeInt((int) Registered.MAX_LOST_AFTER_MILLIS)));
        assertThat(((Registered) ch.readInbound()).lostAfterMillis()).isEqualTo(Registered.MAX_LOST_AFTER_MILLIS);
    }

    /** A REGISTER body of {@code version} up to diskBytes: what every version has. */
    private ByteBuf registerBody(int version) {
        ByteBuf b = body().writeShort(version);
        FrameEncoder.writeStr(b, "w1");
        FrameEncoder.writeStr(b, "t");
        FrameEncoder.writeStr(b, "v");
        return b.writeShort(2).writeLong(1).writeLong(1);
    }

    @Test
    void decode_registerOfVersion5WithoutArchiveEpoch_badFrame() {
        assertViolation(frame(ProtocolLimits.VERSION, MessageType.REGISTER.code(), registerBody(Register.ARCHIVE_EPOCH_VERSION)),
                ErrorCode.BAD_FRAME);
    }

    @Test
    void decode_registerOfVersion4WithArchiveEpoch_badFrameAsAnOlderMasterSaysIt() {
        ByteBuf b = registerBody(Register.GC_FRAMES_VERSION).writeLong(3);
        assertThatThrownBy(() -> ch.writeInbound(frame(ProtocolLimits.VERSION, MessageType.REGISTER.code(), b)))
                .isInstanceOf(ProtocolException.class).hasMessageContaining("REGISTER has 8 trailing bytes");
    }

    @Test
    void decode_heartbeatWithAndWithoutReport_bothAccepted() {
        ch.writeInbound(frame(ProtocolLimits.VERSION, MessageType.HEARTBEAT.code(), heartbeatBody()));
        ch.writeInbound(frame(ProtocolLimits.VERSION, MessageType.HEARTBEAT.code(), heartbeatBody().writeByte(1).writeLong(9).writeLong(4096)));
        assertThat(((Heartbeat) ch.readInbound()).rangeData()).as("an older worker says nothing").isNull();
        assertThat(((Heartbeat) ch.readInbound()).rangeData()).isEqualTo(new Heartbeat.RangeData(Heartbeat.RangeData.SERVING, 9, 4096));
    }
}
