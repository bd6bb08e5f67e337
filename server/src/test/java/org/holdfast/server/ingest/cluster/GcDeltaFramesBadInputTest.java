package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.common.protocol.FrameDecoder;
import org.holdfast.common.protocol.FrameEncoder;
import org.holdfast.common.protocol.GcDelta;
import org.holdfast.common.protocol.GcDeltaApplied;
import org.holdfast.common.protocol.GcDeltaFailed;
import org.holdfast.common.protocol.Message;
import org.holdfast.common.protocol.MessageType;
import org.holdfast.common.protocol.ProtocolException;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.gc.bosc.BoscSettings;
import org.holdfast.gc.bosc.UpdateBatch;
import org.holdfast.gc.gma.GmaChunk.UpdateKinds;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The GC delta frames on the worker link, byte by byte: a worker answers a malformed GC_DELTA with
 * one ERROR and closes (after its linger) before its GC metadata sees anything; a well-formed delta
 * of a PBN outside its range is GC_DELTA_FAILED with nothing logged and the link kept; a replay is
 * acknowledged the same and logs nothing; the master's decoder and end refuse malformed or
 * unexpected answers.
 */
class GcDeltaFramesBadInputTest {
    private static final PbnRange RANGE = new PbnRange(1L << 40, (1L << 40) + (1L << 20));
    private static final long P = RANGE.first();

    @TempDir
    Path dir;
    private WorkerGcMetadata gc;
    private BoscPipeline pipeline;

    @BeforeEach
    void open() {
        gc = new WorkerGcMetadata(dir.resolve("range-data").resolve("gc"), BoscSettings.defaults().withCommitters(1));
        pipeline = gc.claim(RANGE);
    }

    @AfterEach
    void close() {
        gc.close();
    }

    private EmbeddedChannel worker() {
        return new EmbeddedChannel(new FrameDecoder(), new FrameEncoder(), new GcDeltaService(gc, RANGE));
    }

    private static ByteBuf header(MessageType type, long bodyBytes) {
        return WorkerEndFrames.header(type, bodyBytes);
    }

    /** A GC_DELTA header and its fixed fields. */
    private static ByteBuf delta(long bodyBytes, long opId, long part, long count) {
        return header(MessageType.GC_DELTA, bodyBytes).writeLong(opId).writeInt((int) part).writeInt((int) count);
    }

    private void nothingLogged() {
        assertThat(pipeline.lastOpId()).as("no group logged").isZero();
        assertThat(pipeline.updatesLogged()).as("no update logged").isZero();
    }

    /** Feeds {@code bytes} to a worker: one ERROR with {@code code} and {@code message}, the link closed after its linger, nothing logged. */
    private void refused(ByteBuf bytes, ErrorCode code, String message) {
        EmbeddedChannel ch = worker();
        ErrorMessage e = WorkerEndFrames.errorAndClose(ch, bytes);
        assertThat(e.code()).isEqualTo(code);
        assertThat(e.message()).contains(message);
        nothingLogged();
    }

    @Test
    void delta_countOverTheLimit_refusedLimitExceeded() {
        refused(delta(16, 1, 0, ProtocolLimits.MAX_GC_DELTA_UPDATES + 1), ErrorCode.LIMIT_EXCEEDED,
                "GC_DELTA count 65537 is over its limit 65536");
    }

    @Test
    void delta_bodyOverItsLimit_refusedBeforeItIsBuffered() {
        long max = 16 + 17L * ProtocolLimits.MAX_GC_DELTA_UPDATES;
        refused(header(MessageType.GC_DELTA, max + 1).writeLong(1), ErrorCode.LIMIT_EXCEEDED,
                "GC_DELTA body of " + (max + 1) + " bytes is over its limit " + max);
    }

    @Test
    void delta_countZero_refusedBadFrame() {
        refused(delta(16, 1, 0, 0), ErrorCode.BAD_FRAME, "GC_DELTA count 0 is below 1");
    }

    @Test
    void delta_unknownKind_refusedBadFrame() {
        refused(delta(16 + 34, 1, 0, 2).writeByte(GcDelta.RC_ADD).writeLong(P).writeLong(1).writeByte(9).writeLong(P).writeLong(1),
                ErrorCode.BAD_FRAME, "GC_DELTA update 1 has unknown kind 9");
        refused(delta(16 + 17, 1, 0, 1).writeByte(UpdateBatch.GROUP_END).writeLong(P).writeLong(1), ErrorCode.BAD_FRAME,
                "unknown kind 11");
    }

    @Test
    void delta_pbnZero_refusedBadFrame() {
        refused(delta(16 + 17, 1, 0, 1).writeByte(GcDelta.RC_ADD).writeLong(0).writeLong(1), ErrorCode.BAD_FRAME,
                "GC_DELTA update 0 is for PBN 0, which is no block");
    }

    @Test
    void delta_opIdZeroOrTooLargeOrPartTooLarge_refusedBadFrame() {
        refused(delta(16 + 17, 0, 0, 1).writeByte(GcDelta.RC_ADD).writeLong(P).writeLong(1), ErrorCode.BAD_FRAME,
                "GC_DELTA operation id 0 is not within 1.." + GcDelta.MAX_OP_ID);
        refused(delta(16 + 17, GcDelta.MAX_OP_ID + 1, 0, 1).writeByte(GcDelta.RC_ADD).writeLong(P).writeLong(1), ErrorCode.BAD_FRAME,
                "operation id " + (GcDelta.MAX_OP_ID + 1));
        refused(delta(16 + 17, 1, GcDelta.MAX_PART + 1, 1).writeByte(GcDelta.RC_ADD).writeLong(P).writeLong(1), ErrorCode.BAD_FRAME,
                "GC_DELTA part 1048576 is not within 0..1048575");
    }

    @Test
    void delta_shortOrLongBody_refusedBadFrame() {
        refused(delta(16 + 30, 1, 0, 2).writeZero(30), ErrorCode.BAD_FRAME, "truncated body: updates needs 34 bytes, 30 left");
        refused(delta(16 + 18, 1, 0, 1).writeByte(GcDelta.RC_ADD).writeLong(P).writeLong(1).writeByte(0), ErrorCode.BAD_FRAME,
                "GC_DELTA has 1 trailing bytes");
        refused(header(MessageType.GC_DELTA, 10).writeLong(1).writeShort(0), ErrorCode.BAD_FRAME, "truncated body: part");
    }

    /** Sends {@code request} to a worker; returns its answer once it came. */
    private static Message served(EmbeddedChannel ch, Message request) {
        return DedupFramesBadInputTest.served(ch, request);
    }

    private static GcDelta rc(long opId, int part, long... pbns) {
        byte[] kinds = new byte[pbns.length];
        long[] values = new long[pbns.length];
        java.util.Arrays.fill(kinds, (byte) GcDelta.RC_ADD);
        java.util.Arrays.fill(values, 1);
        return new GcDelta(opId, part, pbns.length, kinds, pbns, values);
    }

    @Test
    void delta_pbnOutsideTheRange_failedNothingLoggedAndTheLinkStays() {
        EmbeddedChannel ch = worker();
        GcDeltaFailed f = (GcDeltaFailed) served(ch, rc(3, 0, P, RANGE.limit()));
        assertThat(f.opId()).isEqualTo(3);
        assertThat(f.message()).contains("update 1 of GC operation 3 (part 0) is for PBN " + RANGE.limit() + ", outside this worker's range "
                + RANGE).contains("nothing of it was logged");
        assertThat(served(ch, rc(3, 0, 5)) instanceof GcDeltaFailed g && g.message().contains("PBN 5")).isTrue();
        nothingLogged();
        assertThat(ch.isOpen()).as("a refusal keeps the link").isTrue();
        GcDeltaApplied a = (GcDeltaApplied) served(ch, rc(3, 0, P));
        assertThat(a).as("the corrected delta is logged under the same id").isEqualTo(new GcDeltaApplied(3, 0));
        ch.finishAndReleaseAll();
    }

    @Test
    void delta_replayed_answeredWithTheWorkersMarkAndNothingLogged() {
        EmbeddedChannel ch = worker();
        assertThat(served(ch, rc(4, 0, P, P + 1))).isEqualTo(new GcDeltaApplied(4, 0));
        assertThat(served(ch, rc(4, 1, P + 2))).isEqualTo(new GcDeltaApplied(4, 1));
        long logged = pipeline.updatesLogged();
        assertThat(served(ch, rc(4, 0, P, P + 1))).as("a replay: the mark, all of it already durable").isEqualTo(new GcDeltaApplied(4, 1));
        assertThat(served(ch, rc(2, 0, P))).as("an older operation").isEqualTo(new GcDeltaApplied(4, 1));
        assertThat(pipeline.updatesLogged()).as("the replays logged nothing").isEqualTo(logged).isEqualTo(3);
        assertThat(pipeline.lastOpId()).isEqualTo(GcDelta.deltaId(4, 1));
        ch.finishAndReleaseAll();
    }

    @Test
    void delta_logFailsWhileLogging_failedAndNothingAcknowledgedUntilReopened() {
        EmbeddedChannel ch = worker();
        assertThat(served(ch, rc(1, 0, P))).isEqualTo(new GcDeltaApplied(1, 0));
        pipeline.close(); // the pipeline fails under the worker (as a failed fsync or committer would)
        GcDeltaFailed f = (GcDeltaFailed) served(ch, rc(2, 0, P));
        assertThat(f.message()).contains("failed while logging GC operation 2 (part 0)")
                .contains("no GC delta is logged or acknowledged until the worker restarts");
        assertThat(served(ch, rc(1, 0, P))).as("not even a replay: its mark may not be durable").isInstanceOf(GcDeltaFailed.class);
        ch.finishAndReleaseAll();
        gc.close();
        gc = new WorkerGcMetadata(dir.resolve("range-data").resolve("gc"), BoscSettings.defaults().withCommitters(1));
        pipeline = gc.claim(RANGE);
        assertThat(pipeline.lastOpId()).as("reopened: what was acknowledged is there").isEqualTo(GcDelta.deltaId(1, 0));
    }

    @Test
    void delta_gcDirectoryOfAnotherRange_failedClearly() {
        PbnRange other = new PbnRange(RANGE.limit(), RANGE.limit() + (1L << 20));
        EmbeddedChannel ch = worker();
        assertThat(served(ch, rc(1, 0, P))).isEqualTo(new GcDeltaApplied(1, 0));
        ch.finishAndReleaseAll();
        EmbeddedChannel again = new EmbeddedChannel(new FrameDecoder(), new FrameEncoder(), new GcDeltaService(gc, other));
        GcDeltaFailed f = (GcDeltaFailed) served(again, rc(2, 0, other.first()));
        assertThat(f.message()).contains("GC_DELTA failed on the worker").contains(other.toString());
        assertThat(again.isOpen()).isTrue();
        again.finishAndReleaseAll();
        BoscPipeline reopened = gc.claim(RANGE);
        assertThat(reopened.lastOpId()).as("its own range still opens with what it logged").isEqualTo(GcDelta.deltaId(1, 0));
        pipeline = reopened;
    }

    /** A master's decoder fed {@code bytes}: refused with {@code message}. */
    private static void answerRefused(ByteBuf bytes, ErrorCode code, String message) {
        WorkerEndFrames.answerRefused(bytes, code, message);
    }

    @Test
    void answers_badValues_refusedByTheMastersDecoder() {
        answerRefused(header(MessageType.GC_DELTA_APPLIED, 12).writeLong(0).writeInt(0), ErrorCode.BAD_FRAME,
                "GC_DELTA_APPLIED operation id 0");
        answerRefused(header(MessageType.GC_DELTA_APPLIED, 12).writeLong(1).writeInt(-1), ErrorCode.BAD_FRAME,
                "GC_DELTA_APPLIED part 4294967295");
        answerRefused(header(MessageType.GC_DELTA_APPLIED, 13).writeLong(1).writeInt(0).writeByte(0), ErrorCode.LIMIT_EXCEEDED,
                "GC_DELTA_APPLIED body of 13 bytes is over its limit 12");
        answerRefused(header(MessageType.GC_DELTA_APPLIED, 11).writeLong(1).writeShort(0).writeByte(0), ErrorCode.BAD_FRAME,
                "truncated body");
        answerRefused(header(MessageType.GC_DELTA_FAILED, 14 + 2000).writeLong(1).writeInt(0).writeShort(2000).writeZero(2000),
                ErrorCode.LIMIT_EXCEEDED, "over its limit");
    }

    /** A master's end of a worker's GC deltas over an embedded channel, taking answers. */
    private static RemoteGcDeltas masterEnd(EmbeddedChannel ch) {
        RemoteGcDeltas d = new RemoteGcDeltas("w1", RANGE, ch, Duration.ofSeconds(30));
        ch.pipeline().addLast(new FrameDecoder(), new FrameEncoder(), d.answers());
        return d;
    }

    private static ByteBuf encoded(Message m) {
        return DedupFramesBadInputTest.encoded(m);
    }

    @Test
    void applied_cumulative_completesEveryPartAtOrBelowTheMark() {
        EmbeddedChannel ch = new EmbeddedChannel();
        RemoteGcDeltas d = masterEnd(ch);
        CompletableFuture<Void> a = d.send(rc(5, 0, P));
        CompletableFuture<Void> b = d.send(rc(5, 1, P));
        CompletableFuture<Void> c = d.send(rc(6, 0, P));
        ch.writeInbound(encoded(new GcDeltaApplied(5, 1)));
        assertThat(a).isCompleted();
        assertThat(b).isCompleted();
        assertThat(c).isNotDone();
        assertThat(d.appliedDeltaId()).isEqualTo(GcDelta.deltaId(5, 1));
        ch.writeInbound(encoded(new GcDeltaApplied(9, 0)));
        assertThat(c).as("a worker's mark beyond what this link sent (logged on an earlier link)").isCompleted();
        assertThat(d.pendingCount()).isZero();
        ch.finishAndReleaseAll();
    }

    @Test
    void failed_unknownPart_refusedAndPendingPartsKept() {
        EmbeddedChannel ch = new EmbeddedChannel();
        RemoteGcDeltas d = masterEnd(ch);
        CompletableFuture<Void> a = d.send(rc(5, 0, P));
        assertThatThrownBy(() -> ch.writeInbound(encoded(GcDeltaFailed.of(7, 0, "no")))).isInstanceOf(ProtocolException.class)
                .hasMessageContaining("GC_DELTA_FAILED answers part 0 of operation 7, which is not pending on this link");
        assertThat(a).isNotDone();
        ch.writeInbound(encoded(GcDeltaFailed.of(5, 0, "PBN 9 is outside")));
        assertThatThrownBy(a::join).isInstanceOf(CompletionException.class).hasCauseInstanceOf(RangeWorkerFailedException.class)
                .hasMessageContaining("GC worker w1 (PBNs " + RANGE + ") refused part 0 of GC operation 5: PBN 9 is outside");
        ch.finishAndReleaseAll();
    }

    @Test
    void send_updateOutsideTheWorkersRange_refusedNothingSent() {
        EmbeddedChannel ch = new EmbeddedChannel();
        RemoteGcDeltas d = masterEnd(ch);
        UpdateBatch share = new UpdateBatch();
        share.add(UpdateKinds.RC_ADD, P, 1);
        share.add(UpdateKinds.RC_ADD, RANGE.limit(), 1);
        assertThatThrownBy(() -> d.send(9, share)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("update 1 of GC operation 9 is for PBN " + RANGE.limit() + ", outside worker w1's range")
                .hasMessageContaining("nothing was sent");
        assertThat((Object) ch.readOutbound()).isNull();
        assertThat(d.pendingCount()).isZero();
        ch.finishAndReleaseAll();
    }

    @Test
    void send_partAtOrBelowOneSentBefore_refusedNothingSent() {
        EmbeddedChannel ch = new EmbeddedChannel();
        RemoteGcDeltas d = masterEnd(ch);
        d.send(rc(5, 1, P));
        ((ByteBuf) ch.readOutbound()).release(); // the first part, encoded: not looked at here
        assertThatThrownBy(() -> d.send(rc(5, 0, P))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("part 0 of GC operation 5 comes after part 1 of operation 5")
                .hasMessageContaining("the worker would take it for a replay");
        assertThatThrownBy(() -> d.send(rc(5, 1, P))).as("the same part twice").isInstanceOf(IllegalArgumentException.class);
        assertThat((Object) ch.readOutbound()).isNull();
        assertThat(d.pendingCount()).isEqualTo(1);
        ch.finishAndReleaseAll();
    }

    @Test
    void send_shareOverOneFrame_splitIntoPartsOfOneOperation() {
        EmbeddedChannel ch = new EmbeddedChannel();
        RemoteGcDeltas d = masterEnd(ch);
        UpdateBatch share = new UpdateBatch();
        for (int i = 0; i < ProtocolLimits.MAX_GC_DELTA_UPDATES * 2 + 3; i++) {
            share.add(UpdateKinds.RC_ADD, P + i, 1);
        }
        CompletableFuture<Void> all = d.send(11, share);
        assertThat(d.pendingCount()).isEqualTo(3);
        EmbeddedChannel decode = new EmbeddedChannel(new FrameDecoder());
        int[] counts = new int[3];
        for (int p = 0; p < 3; p++) {
            decode.writeInbound((ByteBuf) ch.readOutbound());
            GcDelta g = decode.readInbound();
            assertThat(g.opId()).isEqualTo(11);
            assertThat(g.part()).isEqualTo(p);
            counts[p] = g.count();
        }
        assertThat(counts).containsExactly(ProtocolLimits.MAX_GC_DELTA_UPDATES, ProtocolLimits.MAX_GC_DELTA_UPDATES, 3);
        ch.writeInbound(encoded(new GcDeltaApplied(11, 1)));
        assertThat(all).isNotDone();
        ch.writeInbound(encoded(new GcDeltaApplied(11, 2)));
        assertThat(all).isCompleted();
        ch.finishAndReleaseAll();
    }

    @Test
    void send_linkCloses_pendingPartsFailAsLost() {
        EmbeddedChannel ch = new EmbeddedChannel();
        RemoteGcDeltas d = masterEnd(ch);
        CompletableFuture<Void> a = d.send(rc(5, 0, P));
        ch.finishAndReleaseAll();
        assertThatThrownBy(a::join).isInstanceOf(CompletionException.class).hasCauseInstanceOf(RangeWorkerLostException.class)
                .hasMessageContaining("GC worker w1 (PBNs " + RANGE + ") is lost: its link closed");
        assertThat(d.isUp()).isFalse();
        assertThatThrownBy(() -> d.send(rc(6, 0, P)).join()).hasCauseInstanceOf(RangeWorkerLostException.class);
    }

    @Test
    void updateKinds_sameNumbersOnTheWireAndInTheGma() {
        assertThat(new int[] {GcDelta.RC_ADD, GcDelta.RAISE_EXPIRY, GcDelta.PIN_ADD})
                .containsExactly(UpdateKinds.RC_ADD, UpdateKinds.RAISE_EXPIRY, UpdateKinds.PIN_ADD);
    }
}
