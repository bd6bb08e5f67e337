package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Consumer;
import org.holdfast.common.hash.BlockHasher;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.DataFailed;
import org.holdfast.common.protocol.DataRepair;
import org.holdfast.common.protocol.DataStoreRequest;
import org.holdfast.common.protocol.DataStored;
import org.holdfast.common.protocol.DataSynced;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.common.protocol.FrameDecoder;
import org.holdfast.common.protocol.FrameEncoder;
import org.holdfast.common.protocol.Message;
import org.holdfast.common.protocol.MessageType;
import org.holdfast.common.protocol.PayloadCodec;
import org.holdfast.common.protocol.ProtocolException;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FsyncPolicy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The data frames on the worker link, byte by byte: a worker answers a malformed request with one
 * ERROR and closes (after its linger) before its range store sees anything; the master's decoder
 * refuses malformed answers, and its end refuses an answer to a request id it has not sent. A
 * well-formed DATA_REPAIR whose upload does not hash, or of a foreign PBN, is refused and the link kept.
 */
class DataFramesBadInputTest {
    private static final PbnRange RANGE = new PbnRange(1L << 40, (1L << 40) + (1L << 20));
    private static final int BS = 4096;

    @TempDir
    Path dir;
    private WorkerRangeData data;

    @BeforeEach
    void open() {
        data = new WorkerRangeData(dir.resolve("range-data"), new DataStore.Settings(dir.resolve("unused"), 1L << 20, FsyncPolicy.COMMIT,
                64, 0));
        data.claim(RANGE);
    }

    @AfterEach
    void close() {
        data.close();
    }

    private EmbeddedChannel worker() {
        return new EmbeddedChannel(new FrameDecoder(), new FrameEncoder(), new RangeDataService(data, RANGE));
    }

    private static ByteBuf header(MessageType type, long bodyBytes) {
        return WorkerEndFrames.header(type, bodyBytes);
    }

    /** Feeds {@code bytes} to a worker; returns its one answer, an ERROR, after which it closes once its linger is over. */
    private ErrorMessage refused(ByteBuf bytes) {
        EmbeddedChannel ch = worker();
        Message m = WorkerEndFrames.errorAndClose(ch, bytes);
        assertThat(data.store().stats().appendedBlocks()).as("the store saw nothing").isZero();
        assertThat(data.store().nextPbn()).isEqualTo(RANGE.first());
        return (ErrorMessage) m;
    }

    private void refused(ByteBuf bytes, ErrorCode code, String message) {
        ErrorMessage e = refused(bytes);
        assertThat(e.code()).isEqualTo(code);
        assertThat(e.message()).contains(message);
    }

    /** A DATA_STORE header and body up to the fingerprints: requestId, codec, block size, count. */
    private static ByteBuf store(long bodyBytes, int codec, int blockSize, int count) {
        return header(MessageType.DATA_STORE, bodyBytes).writeLong(1).writeByte(codec).writeInt(blockSize).writeShort(count);
    }

    @Test
    void store_countOverTheFrameLimit_refusedLimitExceeded() {
        refused(store(15, PayloadCodec.ZSTD_FRAME, 512, ProtocolLimits.MAX_FRAME_MEMBERS + 1), ErrorCode.LIMIT_EXCEEDED,
                "DATA_STORE count 2049 is over its limit 2048");
    }

    @Test
    void store_countZero_refusedBadFrame() {
        refused(store(15 + 4 + 1, PayloadCodec.RAW, BS, 0).writeInt(1).writeByte(0), ErrorCode.BAD_FRAME, "DATA_STORE count 0");
    }

    @Test
    void store_unknownCodec_refusedBadFrame() {
        refused(store(15 + 32 + 4 + 1, 9, BS, 1).writeZero(32).writeInt(1).writeByte(0), ErrorCode.BAD_FRAME,
                "codec unknown(9) cannot be stored");
    }

    @Test
    void store_zeroOrMemberCodec_refusedBadFrame() {
        refused(store(15 + 32 + 4 + 1, PayloadCodec.ZERO, BS, 1).writeZero(32).writeInt(1).writeByte(0), ErrorCode.BAD_FRAME,
                "codec zero cannot be stored");
        refused(store(15 + 32 + 4 + 1, PayloadCodec.FRAME_MEMBER, BS, 1).writeZero(32).writeInt(1).writeByte(0), ErrorCode.BAD_FRAME,
                "codec frame-member cannot be stored");
    }

    @Test
    void store_storedLengthOverTheLimit_refusedLimitExceeded() {
        refused(store(15 + 32 + 4, PayloadCodec.ZSTD_FRAME, BS, 1).writeZero(32).writeInt(-1), ErrorCode.LIMIT_EXCEEDED,
                "DATA_STORE stored length 4294967295 is over its limit 1052672");
    }

    @Test
    void store_frameOfMoreThanOneMebibyteOfBlocks_refusedBadFrame() {
        refused(store(15 + 64 + 4 + 1, PayloadCodec.ZSTD_FRAME, ProtocolLimits.MAX_BLOCK_SIZE, 2).writeZero(64).writeInt(1).writeByte(0),
                ErrorCode.BAD_FRAME, "2 blocks of 1048576 bytes do not make a frame");
    }

    @Test
    void store_badBlockSizeOrRawLengthOrManyRawBlocks_refusedBadFrame() {
        refused(store(15 + 32 + 4 + 1, PayloadCodec.RAW, 1000, 1).writeZero(32).writeInt(1).writeByte(0), ErrorCode.BAD_FRAME,
                "block size 1000 is not a power of two");
        refused(store(15 + 32 + 4 + 1, PayloadCodec.RAW, BS, 1).writeZero(32).writeInt(1).writeByte(0), ErrorCode.BAD_FRAME,
                "stored length 1 does not fit a raw payload");
        refused(store(15 + 64 + 4 + 1, PayloadCodec.ZSTD, BS, 2).writeZero(64).writeInt(1).writeByte(0), ErrorCode.BAD_FRAME,
                "a zstd payload is one block, not 2");
    }

    @Test
    void store_shortBody_refusedBadFrame() {
        refused(store(15 + 32 + 4 + 10, PayloadCodec.ZSTD, BS, 2 - 1).writeZero(32).writeInt(11).writeZero(10), ErrorCode.BAD_FRAME,
                "truncated body: stored bytes needs 11 bytes, 10 left");
        refused(store(15 + 40, PayloadCodec.ZSTD_FRAME, BS, 2).writeZero(40), ErrorCode.BAD_FRAME,
                "truncated body: fingerprints needs 64 bytes, 40 left");
    }

    @Test
    void store_longBody_refusedBadFrame() {
        refused(store(15 + 32 + 4 + 2, PayloadCodec.ZSTD, BS, 1).writeZero(32).writeInt(1).writeZero(2), ErrorCode.BAD_FRAME,
                "DATA_STORE has 1 trailing bytes");
    }

    @Test
    void read_countOverLimitOrZero_refused() {
        refused(header(MessageType.DATA_READ, 12).writeLong(1).writeInt(ProtocolLimits.MAX_DATA_READ + 1), ErrorCode.LIMIT_EXCEEDED,
                "DATA_READ count 1025 is over its limit 1024");
        refused(header(MessageType.DATA_READ, 12).writeLong(1).writeInt(0), ErrorCode.BAD_FRAME, "DATA_READ count 0 is below 1");
    }

    @Test
    void read_shortLongOrPbnZero_refusedBadFrame() {
        refused(header(MessageType.DATA_READ, 12 + 12).writeLong(1).writeInt(2).writeZero(12), ErrorCode.BAD_FRAME,
                "truncated body: PBNs needs 16 bytes, 12 left");
        refused(header(MessageType.DATA_READ, 12 + 9).writeLong(1).writeInt(1).writeLong(5).writeByte(0), ErrorCode.BAD_FRAME,
                "DATA_READ has 1 trailing bytes");
        refused(header(MessageType.DATA_READ, 12 + 8).writeLong(1).writeInt(1).writeLong(0), ErrorCode.BAD_FRAME,
                "PBN 0 of entry 0 is not a stored block");
    }

    @Test
    void sync_bodyOverItsLimit_refusedLimitExceeded() {
        refused(header(MessageType.DATA_SYNC, 9).writeLong(1).writeByte(0), ErrorCode.LIMIT_EXCEEDED, "DATA_SYNC body of 9 bytes is over its limit 8");
        refused(header(MessageType.DATA_SYNC, 4).writeInt(1), ErrorCode.BAD_FRAME, "truncated body");
    }

    /** A master's decoder fed {@code bytes}: refused with {@code message}. */
    private static void answerRefused(ByteBuf bytes, ErrorCode code, String message) {
        WorkerEndFrames.answerRefused(bytes, code, message);
    }

    @Test
    void answers_badValues_refusedByTheMastersDecoder() {
        answerRefused(header(MessageType.DATA_STORED, 18).writeLong(1).writeLong(0).writeShort(1), ErrorCode.BAD_FRAME,
                "DATA_STORED first PBN 0 and count 1 do not name stored blocks");
        answerRefused(header(MessageType.DATA_STORED, 18).writeLong(1).writeLong(5).writeShort(0), ErrorCode.BAD_FRAME,
                "first PBN 5 and count 0");
        answerRefused(header(MessageType.DATA_STORED, 18).writeLong(1).writeLong(5).writeShort(2049), ErrorCode.LIMIT_EXCEEDED,
                "DATA_STORED count 2049 is over its limit 2048");
        answerRefused(header(MessageType.DATA_STORED, 17).writeLong(1).writeLong(5).writeByte(1), ErrorCode.BAD_FRAME, "truncated body");
        answerRefused(header(MessageType.DATA_SYNCED, 16).writeLong(1).writeLong(-1), ErrorCode.BAD_FRAME,
                "DATA_SYNCED durableBelow 18446744073709551615 is out of range");
        answerRefused(header(MessageType.DATA_READ_ANSWER, 12).writeLong(1).writeInt(1025), ErrorCode.LIMIT_EXCEEDED,
                "DATA_READ_ANSWER count 1025 is over its limit 1024");
        answerRefused(header(MessageType.DATA_READ_ANSWER, 12 + 49).writeLong(1).writeInt(2).writeZero(49), ErrorCode.BAD_FRAME,
                "truncated body: block headers needs 98 bytes");
        answerRefused(answerBlock(9, BS, 1), ErrorCode.BAD_FRAME, "DATA_READ_ANSWER block 0: codec unknown(9) is not a stored block's");
        answerRefused(answerBlock(PayloadCodec.RAW, BS, 1), ErrorCode.BAD_FRAME, "stored length 1 does not fit a raw block of 4096 bytes");
        answerRefused(answerBlock(PayloadCodec.ZSTD, 3000, 1), ErrorCode.BAD_FRAME, "raw length 3000 is not a block size");
        ByteBuf cut = header(MessageType.DATA_READ_ANSWER, 12 + 49 + 1).writeLong(1).writeInt(1).writeLong(7).writeZero(32)
                .writeByte(PayloadCodec.ZSTD).writeInt(BS).writeInt(2).writeByte(0);
        answerRefused(cut, ErrorCode.BAD_FRAME, "truncated body: stored bytes of block 0 needs 2 bytes, 1 left");
    }

    /** A DATA_READ_ANSWER of one block at PBN 7 with one stored byte. */
    private static ByteBuf answerBlock(int codec, int rawLength, int storedLength) {
        return header(MessageType.DATA_READ_ANSWER, 12 + 49 + 1).writeLong(1).writeInt(1).writeLong(7).writeZero(32).writeByte(codec)
                .writeInt(rawLength).writeInt(storedLength).writeByte(0);
    }

    /** Sends {@code request} to a worker; returns its answer once it came. */
    private Message served(EmbeddedChannel ch, Message request) {
        return DedupFramesBadInputTest.served(ch, request);
    }

    @Test
    void store_wellFormed_answeredWithItsRequestIdAndTheRangesFirstPbn() {
        byte[] block = new byte[BS];
        new java.util.Random(1).nextBytes(block);
        byte[] fp = new byte[32];
        BlockHasher.forCurrentThread().sha256(block, 0, BS, fp, 0);
        EmbeddedChannel ch = worker();
        DataStored s = (DataStored) served(ch, new DataStoreRequest(77, PayloadCodec.RAW, BS, 1, fp, block));
        assertThat(s.requestId()).isEqualTo(77);
        assertThat(s.first()).isEqualTo(RANGE.first());
        DataSynced synced = (DataSynced) served(ch, new org.holdfast.common.protocol.DataSync(78));
        assertThat(synced.durableBelow()).isEqualTo(RANGE.first() + 1);
        ch.finishAndReleaseAll();
    }

    /** A DATA_REPAIR of PBN {@code pbn} with codec {@code codec}, a zero fingerprint and one stored byte. */
    private static ByteBuf repair(long pbn, int codec) {
        return header(MessageType.DATA_REPAIR, 8 + 8 + 1 + 4 + 32 + 4 + 1).writeLong(1).writeLong(pbn).writeByte(codec).writeInt(BS)
                .writeZero(32).writeInt(1).writeByte(0);
    }

    @Test
    void repair_frameCodecPbnZeroOrShortStored_refusedBadFrame() {
        refused(repair(RANGE.first(), PayloadCodec.ZSTD_FRAME), ErrorCode.BAD_FRAME, "DATA_REPAIR: a repair carries one block");
        refused(repair(0, PayloadCodec.ZSTD), ErrorCode.BAD_FRAME, "PBN 0 of entry 0 is not a stored block");
        refused(repair(RANGE.first(), PayloadCodec.RAW), ErrorCode.BAD_FRAME, "stored length 1 does not fit a raw payload");
    }

    @Test
    void repair_uploadNotHashingOrForeignPbn_refusedNothingChangedLinkKept() {
        byte[] block = new byte[BS];
        new java.util.Random(1).nextBytes(block);
        byte[] fp = new byte[32];
        BlockHasher.forCurrentThread().sha256(block, 0, BS, fp, 0);
        EmbeddedChannel ch = worker();
        long pbn = ((DataStored) served(ch, new DataStoreRequest(1, PayloadCodec.RAW, BS, 1, fp, block))).first();
        served(ch, new org.holdfast.common.protocol.DataSync(2));
        byte[] other = block.clone();
        other[9] ^= 1;
        DataFailed f = (DataFailed) served(ch, new DataRepair(3, pbn, PayloadCodec.RAW, BS, fp, other));
        assertThat(f.message()).contains("DATA_REPAIR refused: block 0 of 1 does not hash to its fingerprint").contains("nothing changed");
        f = (DataFailed) served(ch, new DataRepair(4, RANGE.limit(), PayloadCodec.RAW, BS, fp, block));
        assertThat(f.message()).contains("PBN " + RANGE.limit() + " is outside this worker's range");
        assertThat(ch.isOpen()).as("a refusal keeps the link").isTrue();
        assertThat(data.store().stats().appendedBlocks()).as("only the stored block").isEqualTo(1);
        assertThat(served(ch, new DataRepair(5, pbn, PayloadCodec.RAW, BS, fp, block))).as("a sound block: nothing to repair, answered")
                .isEqualTo(new DataStored(5, pbn, 1));
        assertThat(data.store().stats().appendedBlocks()).isEqualTo(1);
        ch.finishAndReleaseAll();
    }

    @Test
    void store_directoryOfAnotherRange_refusedClearlyNothingStored() {
        PbnRange other = new PbnRange(RANGE.limit(), RANGE.limit() + (1L << 20));
        EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder(), new FrameEncoder(), new RangeDataService(data, other));
        byte[] block = new byte[BS];
        DataFailed f = (DataFailed) served(ch, new DataStoreRequest(5, PayloadCodec.RAW, BS, 1, new byte[32], block));
        assertThat(f.requestId()).isEqualTo(5);
        assertThat(f.message()).contains("was created for PBN range " + RANGE).contains("it is another node's data directory");
        assertThat(ch.isOpen()).as("a refusal keeps the link").isTrue();
        ch.finishAndReleaseAll();
        assertThatThrownBy(() -> data.claim(other)).as("refused again, not opened").hasMessageContaining("was created for PBN range");
        assertThat(data.claim(RANGE).stats().appendedBlocks()).as("its own range still opens, empty").isZero();
    }

    /** A master's end of a worker's range store over an embedded channel, taking answers. */
    private static RemoteRangeStore masterEnd(EmbeddedChannel ch) {
        RemoteRangeStore s = new RemoteRangeStore("w1", RANGE, ch, Duration.ofSeconds(30));
        ch.pipeline().addLast(new FrameDecoder(), new FrameEncoder(), s.answers());
        return s;
    }

    private static ByteBuf encoded(Message m) {
        return DedupFramesBadInputTest.encoded(m);
    }

    @Test
    void answer_unknownRequestId_refusedAndPendingCallsKept() {
        EmbeddedChannel ch = new EmbeddedChannel();
        RemoteRangeStore s = masterEnd(ch);
        CompletableFuture<Long> call = s.sync();
        assertThatThrownBy(() -> ch.writeInbound(encoded(new DataSynced(42, 9)))).isInstanceOf(ProtocolException.class)
                .hasMessageContaining("DATA_SYNCED answers request 42, which is not pending on this link");
        assertThat(call).isNotDone();
        assertThat(s.pendingCount()).isEqualTo(1);
        ch.writeInbound(encoded(new DataSynced(1, 9)));
        assertThat(call.join()).isEqualTo(9);
        ch.finishAndReleaseAll();
    }

    @Test
    void stored_outsideTheWorkersRange_failsTheCall() {
        EmbeddedChannel ch = new EmbeddedChannel();
        RemoteRangeStore s = masterEnd(ch);
        CompletableFuture<Long> call = s.store(PayloadCodec.RAW, BS, 1, new byte[32], new byte[BS]);
        ch.writeInbound(encoded(new DataStored(1, 5, 1)));
        assertThatThrownBy(call::join).isInstanceOf(CompletionException.class).hasCauseInstanceOf(RangeWorkerFailedException.class)
                .hasMessageContaining("which is not its range " + RANGE);
        ch.finishAndReleaseAll();
    }

    @Test
    void call_linkCloses_pendingCallsFailAsLost() {
        EmbeddedChannel ch = new EmbeddedChannel();
        RemoteRangeStore s = masterEnd(ch);
        CompletableFuture<Long> sync = s.sync();
        CompletableFuture<java.util.List<byte[]>> read = s.read(new long[] {RANGE.first()});
        ch.finishAndReleaseAll(); // closes the link (and releases the calls' frames)
        Consumer<CompletableFuture<?>> lost = f -> assertThatThrownBy(f::join).isInstanceOf(CompletionException.class)
                .hasCauseInstanceOf(RangeWorkerLostException.class).hasMessageContaining("data worker w1 (PBNs " + RANGE + ") is lost: its link closed");
        lost.accept(sync);
        lost.accept(read);
        assertThat(s.isUp()).isFalse();
        lost.accept(s.sync());
    }
}
