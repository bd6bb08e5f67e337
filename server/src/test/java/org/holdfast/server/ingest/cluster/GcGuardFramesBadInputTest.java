package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

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
import org.holdfast.common.protocol.GcGuardFailed;
import org.holdfast.common.protocol.GcProtect;
import org.holdfast.common.protocol.GcProtected;
import org.holdfast.common.protocol.GcSessionEnd;
import org.holdfast.common.protocol.Message;
import org.holdfast.common.protocol.MessageType;
import org.holdfast.common.protocol.ProtocolException;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.gc.bosc.BoscSettings;
import org.holdfast.gc.sweep.GraceGuard;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The grace protection frames on the worker link, byte by byte: a worker answers a malformed
 * GC_PROTECT or GC_SESSION_END with one ERROR and closes (after its linger) before its guard sees
 * anything; a well-formed protection of a PBN outside its range is GC_GUARD_FAILED with nothing
 * logged, no session opened and the link kept; the master's decoder and end refuse malformed or
 * unexpected answers.
 */
class GcGuardFramesBadInputTest {
    private static final PbnRange RANGE = new PbnRange(1L << 40, (1L << 40) + (1L << 20));
    private static final long P = RANGE.first();

    @TempDir
    Path dir;
    private WorkerGcMetadata gc;
    private BoscPipeline pipeline;
    private GraceGuard guard;

    @BeforeEach
    void open() {
        gc = new WorkerGcMetadata(dir.resolve("range-data").resolve("gc"), BoscSettings.defaults().withCommitters(1));
        pipeline = gc.claim(RANGE);
        guard = gc.guard();
    }

    @AfterEach
    void close() {
        gc.close();
    }

    private EmbeddedChannel worker() {
        return new EmbeddedChannel(new FrameDecoder(), new FrameEncoder(), new GcGuardService(gc, RANGE));
    }

    private static ByteBuf header(MessageType type, long bodyBytes) {
        return WorkerEndFrames.header(type, bodyBytes);
    }

    /** A GC_PROTECT header and its fixed fields. */
    private static ByteBuf protect(long bodyBytes, int mode, long count) {
        return header(MessageType.GC_PROTECT, bodyBytes).writeLong(1).writeLong(9).writeByte(mode).writeInt((int) count);
    }

    private void nothingProtected() {
        assertThat(pipeline.updatesLogged()).as("no update logged").isZero();
        assertThat(guard.openSessions()).as("no session opened").isZero();
    }

    /** Feeds {@code bytes} to a worker: one ERROR with {@code code} and {@code message}, the link closed after its linger, nothing protected. */
    private void refused(ByteBuf bytes, ErrorCode code, String message) {
        EmbeddedChannel ch = worker();
        ErrorMessage e = WorkerEndFrames.errorAndClose(ch, bytes);
        assertThat(e.code()).isEqualTo(code);
        assertThat(e.message()).contains(message);
        nothingProtected();
    }

    @Test
    void protect_countOverTheLimit_refusedLimitExceeded() {
        refused(protect(21, 0, ProtocolLimits.MAX_GC_PROTECT_PBNS + 1), ErrorCode.LIMIT_EXCEEDED,
                "GC_PROTECT count 65537 is over its limit 65536");
    }

    @Test
    void protect_bodyOverItsLimit_refusedBeforeItIsBuffered() {
        long max = 21 + 8L * ProtocolLimits.MAX_GC_PROTECT_PBNS;
        refused(header(MessageType.GC_PROTECT, max + 1).writeLong(1), ErrorCode.LIMIT_EXCEEDED,
                "GC_PROTECT body of " + (max + 1) + " bytes is over its limit " + max);
    }

    @Test
    void protect_countZero_refusedBadFrame() {
        refused(protect(21, 0, 0), ErrorCode.BAD_FRAME, "GC_PROTECT count 0 is below 1");
    }

    @Test
    void protect_unknownMode_refusedBadFrame() {
        refused(protect(29, 2, 1).writeLong(P), ErrorCode.BAD_FRAME, "GC_PROTECT mode 2 is neither 0 (strict) nor 1 (zero refused)");
    }

    @Test
    void protect_pbnZero_refusedBadFrame() {
        refused(protect(37, 1, 2).writeLong(P).writeLong(0), ErrorCode.BAD_FRAME, "GC_PROTECT entry 1 is PBN 0, which is no block");
    }

    @Test
    void protect_shortOrLongBody_refusedBadFrame() {
        refused(protect(21 + 12, 0, 2).writeZero(12), ErrorCode.BAD_FRAME, "truncated body: pbns needs 16 bytes, 12 left");
        refused(protect(21 + 9, 0, 1).writeLong(P).writeByte(0), ErrorCode.BAD_FRAME, "GC_PROTECT has 1 trailing bytes");
        refused(header(MessageType.GC_PROTECT, 12).writeLong(1).writeInt(0), ErrorCode.BAD_FRAME, "truncated body: sessionId");
    }

    @Test
    void sessionEnd_shortOrLongBody_refused() {
        refused(header(MessageType.GC_SESSION_END, 9).writeLong(1).writeByte(0), ErrorCode.LIMIT_EXCEEDED,
                "GC_SESSION_END body of 9 bytes is over its limit 8");
        refused(header(MessageType.GC_SESSION_END, 4).writeInt(1), ErrorCode.BAD_FRAME, "truncated body: sessionId");
    }

    private static Message served(EmbeddedChannel ch, Message request) {
        return DedupFramesBadInputTest.served(ch, request);
    }

    @Test
    void protect_pbnOutsideTheRange_failedNothingProtectedAndTheLinkStays() {
        EmbeddedChannel ch = worker();
        GcGuardFailed f = (GcGuardFailed) served(ch, new GcProtect(3, 9, true, 2, new long[] {P, RANGE.limit()}));
        assertThat(f.requestId()).isEqualTo(3);
        assertThat(f.message()).contains("GC_PROTECT entry 1 is PBN " + RANGE.limit() + ", outside this worker's range " + RANGE)
                .contains("nothing of it was protected");
        assertThat(served(ch, new GcProtect(4, 9, false, 1, new long[] {5})) instanceof GcGuardFailed g && g.message().contains("PBN 5"))
                .isTrue();
        nothingProtected();
        assertThat(ch.isOpen()).as("a refusal keeps the link").isTrue();
        assertThat(served(ch, new GcProtect(5, 9, false, 1, new long[] {P}))).isEqualTo(new GcProtected(5, new int[0]));
        assertThat(pipeline.updatesLogged()).isEqualTo(1);
        ch.finishAndReleaseAll();
    }

    @Test
    void protect_gcDirectoryOfAnotherRange_failedClearly() {
        PbnRange other = new PbnRange(RANGE.limit(), RANGE.limit() + (1L << 20));
        EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder(), new FrameEncoder(), new GcGuardService(gc, other));
        GcGuardFailed f = (GcGuardFailed) served(ch, new GcProtect(1, 2, true, 1, new long[] {other.first()}));
        assertThat(f.message()).contains("GC_PROTECT refused on the worker").contains("would not open").contains(other.toString())
                .contains("nothing of it was protected");
        assertThat(ch.isOpen()).isTrue();
        ch.finishAndReleaseAll();
        pipeline = gc.claim(RANGE);
        assertThat(pipeline.updatesLogged()).as("its own range still opens, nothing protected in it").isZero();
    }

    @Test
    void sessionEnd_ofASessionThisLinkDidNotOpen_endsNothing() {
        EmbeddedChannel ch = worker();
        long[] other = {P + 1};
        guard.protect(77, other, 0, 1, true); // a session of another link (or the standalone path)
        assertThat(served(ch, new GcProtect(1, 78, true, 1, new long[] {P}))).isEqualTo(new GcProtected(1, new int[0]));
        assertThat(guard.openSessions()).isEqualTo(2);
        ch.writeInbound(DedupFramesBadInputTest.encoded(new GcSessionEnd(77)));
        ch.writeInbound(DedupFramesBadInputTest.encoded(new GcSessionEnd(78)));
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            ch.runPendingTasks();
            return guard.openSessions() == 1;
        });
        assertThat(guard.sweepHorizon(Long.MAX_VALUE)).as("session 77 still holds it").isLessThan(Long.MAX_VALUE);
        assertThat((Object) ch.readOutbound()).as("GC_SESSION_END has no answer").isNull();
        ch.finishAndReleaseAll();
        guard.sessionEnded(77);
    }

    @Test
    void protect_whileADeltaHoldsTheGcMetadataAcrossItsFsync_isServedAllTheSame() throws Exception {
        EmbeddedChannel ch = worker();
        assertThat(served(ch, new GcProtect(1, 5, true, 1, new long[] {P}))).isEqualTo(new GcProtected(1, new int[0]));
        java.util.concurrent.CountDownLatch held = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
        Thread delta = new Thread(() -> {
            synchronized (gc) { // what WorkerGcMetadata.log holds while it syncs a delta
                held.countDown();
                try {
                    done.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        delta.start();
        held.await();
        try {
            assertThat(served(ch, new GcProtect(2, 5, true, 1, new long[] {P + 1}))).as("its own lane, its own guard reference")
                    .isEqualTo(new GcProtected(2, new int[0]));
        } finally {
            done.countDown();
            delta.join();
        }
        ch.finishAndReleaseAll();
    }

    /** A master's decoder fed {@code bytes}: refused with {@code message}. */
    private static void answerRefused(ByteBuf bytes, ErrorCode code, String message) {
        WorkerEndFrames.answerRefused(bytes, code, message);
    }

    @Test
    void answers_badValues_refusedByTheMastersDecoder() {
        answerRefused(header(MessageType.GC_PROTECTED, 12).writeLong(1).writeInt(ProtocolLimits.MAX_GC_PROTECT_PBNS + 1),
                ErrorCode.LIMIT_EXCEEDED, "GC_PROTECTED refused 65537 is over its limit 65536");
        answerRefused(header(MessageType.GC_PROTECTED, 20).writeLong(1).writeInt(2).writeInt(3).writeInt(3), ErrorCode.BAD_FRAME,
                "GC_PROTECTED refused entry 3 is not below 65536 and above the one before it");
        answerRefused(header(MessageType.GC_PROTECTED, 16).writeLong(1).writeInt(1).writeInt(-1), ErrorCode.BAD_FRAME,
                "refused entry 4294967295");
        answerRefused(header(MessageType.GC_PROTECTED, 14).writeLong(1).writeInt(1).writeShort(0), ErrorCode.BAD_FRAME,
                "truncated body: entries");
        answerRefused(header(MessageType.GC_GUARD_FAILED, 10 + 2000).writeLong(1).writeShort(2000).writeZero(2000),
                ErrorCode.LIMIT_EXCEEDED, "over its limit");
    }

    /** A master's end of a worker's guard over an embedded channel, taking answers. */
    private static RemoteGcGuard masterEnd(EmbeddedChannel ch) {
        RemoteGcGuard g = new RemoteGcGuard("w1", RANGE, ch, Duration.ofSeconds(30));
        ch.pipeline().addLast(new FrameDecoder(), new FrameEncoder(), g.answers());
        return g;
    }

    private static ByteBuf encoded(Message m) {
        return DedupFramesBadInputTest.encoded(m);
    }

    @Test
    void protected_entryBeyondTheRequest_failsTheCall() {
        EmbeddedChannel ch = new EmbeddedChannel();
        RemoteGcGuard g = masterEnd(ch);
        CompletableFuture<int[]> a = g.protect(5, new long[] {P, P + 1}, 0, 2, true);
        ch.writeInbound(encoded(new GcProtected(1, new int[] {2})));
        assertThatThrownBy(a::join).hasCauseInstanceOf(RangeWorkerFailedException.class)
                .hasMessageContaining("refused entry 2 of a GC_PROTECT of 2 PBNs: no such entry");
        ch.finishAndReleaseAll();
    }

    @Test
    void guardFailed_unknownRequest_refusedAndPendingCallsKept() {
        EmbeddedChannel ch = new EmbeddedChannel();
        RemoteGcGuard g = masterEnd(ch);
        CompletableFuture<int[]> a = g.protect(5, new long[] {P}, 0, 1, false);
        assertThatThrownBy(() -> ch.writeInbound(encoded(GcGuardFailed.of(42, "no")))).isInstanceOf(ProtocolException.class)
                .hasMessageContaining("GC_GUARD_FAILED answers request 42, which is not pending on this link");
        assertThat(a).isNotDone();
        ch.writeInbound(encoded(GcGuardFailed.of(1, "PBN 9 is outside")));
        assertThatThrownBy(a::join).isInstanceOf(CompletionException.class).hasCauseInstanceOf(RangeWorkerFailedException.class)
                .hasMessageContaining("GC worker w1 (PBNs " + RANGE + ") refused to protect blocks: PBN 9 is outside");
        ch.finishAndReleaseAll();
    }

    @Test
    void protect_pbnOutsideTheWorkersRange_refusedNothingSent() {
        EmbeddedChannel ch = new EmbeddedChannel();
        RemoteGcGuard g = masterEnd(ch);
        assertThatThrownBy(() -> g.protect(9, new long[] {P, RANGE.limit()}, 0, 2, true)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("PBN " + RANGE.limit() + " is outside worker w1's range").hasMessageContaining("nothing was sent");
        assertThat((Object) ch.readOutbound()).isNull();
        assertThat(g.pendingCount()).isZero();
        ch.finishAndReleaseAll();
    }

    @Test
    void protect_linkCloses_pendingCallsFailAsLost() {
        EmbeddedChannel ch = new EmbeddedChannel();
        RemoteGcGuard g = masterEnd(ch);
        CompletableFuture<int[]> a = g.protect(5, new long[] {P}, 0, 1, false);
        ch.finishAndReleaseAll();
        assertThatThrownBy(a::join).isInstanceOf(CompletionException.class).hasCauseInstanceOf(RangeWorkerLostException.class)
                .hasMessageContaining("GC worker w1 (PBNs " + RANGE + ") is lost: its link closed");
        assertThat(g.isUp()).isFalse();
        assertThatThrownBy(() -> g.protect(6, new long[] {P}, 0, 1, false).join()).hasCauseInstanceOf(RangeWorkerLostException.class);
    }
}
