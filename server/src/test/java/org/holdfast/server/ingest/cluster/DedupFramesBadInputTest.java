package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.holdfast.common.protocol.DedupAnswer;
import org.holdfast.common.protocol.DedupCandidates;
import org.holdfast.common.protocol.DedupControl;
import org.holdfast.common.protocol.DedupDone;
import org.holdfast.common.protocol.DedupFrames;
import org.holdfast.common.protocol.DedupLookup;
import org.holdfast.common.protocol.DedupProbe;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.common.protocol.FrameDecoder;
import org.holdfast.common.protocol.FrameEncoder;
import org.holdfast.common.protocol.Message;
import org.holdfast.common.protocol.MessageType;
import org.holdfast.common.protocol.ProtocolException;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.server.engine.LocalDedupWorker;
import org.holdfast.server.engine.SungemFingerprintIndexTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The dedup frames on the worker link (the two-phase probe and its answer too), byte by byte: a worker answers a malformed request with one
 * ERROR and closes (after its linger) before its engine sees anything; the master refuses an answer to a request id
 * it has not sent.
 */
class DedupFramesBadInputTest {
    @TempDir
    Path dir;
    private LocalDedupWorker engine;

    @BeforeEach
    void open() {
        engine = new LocalDedupWorker(0, dir.resolve("worker"), SungemFingerprintIndexTest.smallSettings(), Clock.systemUTC());
    }

    @AfterEach
    void close() {
        engine.close();
    }

    private EmbeddedChannel worker() {
        return new EmbeddedChannel(new FrameDecoder(), new FrameEncoder(), new DedupService(engine));
    }

    private static ByteBuf header(MessageType type, long bodyBytes) {
        return Unpooled.buffer().writeInt((int) (bodyBytes + ProtocolLimits.HEADER_BYTES)).writeByte(ProtocolLimits.VERSION)
                .writeByte(type.code());
    }

    static ByteBuf encoded(Message m) {
        ByteBuf b = Unpooled.buffer();
        FrameEncoder.write(m, b);
        return b;
    }

    /** Feeds {@code bytes} to a worker; returns its one answer, an ERROR, after which it closes once its linger is over. */
    private ErrorMessage refused(ByteBuf bytes) {
        EmbeddedChannel ch = worker();
        ch.writeInbound(bytes);
        ch.runPendingTasks();
        Object out = ch.readOutbound();
        ByteBuf frame = (ByteBuf) out;
        EmbeddedChannel decode = new EmbeddedChannel(new FrameDecoder());
        decode.writeInbound(frame);
        Message m = decode.readInbound();
        assertThat(ch.isOpen()).as("the worker lingers after the ERROR, draining what the master still sends").isTrue();
        ch.advanceTimeBy(org.holdfast.common.protocol.ErrorLinger.ERROR_LINGER_MILLIS, java.util.concurrent.TimeUnit.MILLISECONDS);
        ch.runScheduledPendingTasks();
        assertThat(ch.isOpen()).as("the worker closes the link once the linger is over").isFalse();
        assertThat(engine.engine().stats().lookups()).as("the engine saw nothing").isZero();
        assertThat(engine.load().storedEntries()).isZero();
        return (ErrorMessage) m;
    }

    @Test
    void lookup_countOverLimit_refusedLimitExceeded() {
        ByteBuf b = header(MessageType.DEDUP_LOOKUP, 20).writeLong(1).writeLong(1).writeInt(ProtocolLimits.MAX_DEDUP_ENTRIES + 1);
        ErrorMessage e = refused(b);
        assertThat(e.code()).isEqualTo(ErrorCode.LIMIT_EXCEEDED);
        assertThat(e.message()).contains("DEDUP_LOOKUP count 65537 is over its limit 65536");
    }

    @Test
    void lookup_fewerFingerprintBytesThanCount_refusedBadFrame() {
        ByteBuf b = header(MessageType.DEDUP_LOOKUP, 20 + 32).writeLong(1).writeLong(1).writeInt(2).writeZero(32);
        ErrorMessage e = refused(b);
        assertThat(e.code()).isEqualTo(ErrorCode.BAD_FRAME);
        assertThat(e.message()).contains("truncated body").contains("fingerprints");
    }

    @Test
    void lookup_trailingBytes_refusedBadFrame() {
        ByteBuf b = header(MessageType.DEDUP_LOOKUP, 20 + 32 + 1).writeLong(1).writeLong(1).writeInt(1).writeZero(33);
        assertThat(refused(b).message()).contains("DEDUP_LOOKUP has 1 trailing bytes");
    }

    @Test
    void record_placedOverCount_refusedBadFrame() {
        ByteBuf b = header(MessageType.DEDUP_RECORD, 24 + 40 + 1).writeLong(1).writeLong(1).writeInt(1).writeInt(2).writeZero(41);
        ErrorMessage e = refused(b);
        assertThat(e.code()).isEqualTo(ErrorCode.BAD_FRAME);
        assertThat(e.message()).contains("placed 2 is over its count 1");
    }

    @Test
    void record_newFlagBeyondCount_refusedBadFrame() {
        ByteBuf b = header(MessageType.DEDUP_RECORD, 24 + 40 + 1).writeLong(1).writeLong(1).writeInt(1).writeInt(0).writeZero(40)
                .writeByte(0b10);
        assertThat(refused(b).message()).contains("new flags set beyond count 1");
    }

    @Test
    void forget_negativePbn_refusedBadFrame() {
        ByteBuf b = header(MessageType.DEDUP_FORGET, 12 + 40).writeLong(1).writeInt(1).writeLong(-1).writeZero(32);
        assertThat(refused(b).message()).contains("PBN 18446744073709551615 of entry 0 is out of range");
    }

    @Test
    void control_unknownOp_refusedBadFrame() {
        ByteBuf b = header(MessageType.DEDUP_CONTROL, 17).writeLong(1).writeByte(9).writeLong(0);
        assertThat(refused(b).message()).contains("unknown DEDUP_CONTROL op 9");
    }

    /** Sends {@code request} to a worker; returns its answer once it came. */
    private Message served(Message request) {
        return served(worker(), request);
    }

    /** Sends {@code request} over {@code ch}, a worker's end of a link; returns its answer once it came. */
    static Message served(EmbeddedChannel ch, Message request) {
        ch.writeInbound(encoded(request));
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            ch.runPendingTasks();
            return !ch.outboundMessages().isEmpty();
        });
        EmbeddedChannel decode = new EmbeddedChannel(new FrameDecoder());
        decode.writeInbound((ByteBuf) ch.readOutbound());
        return decode.readInbound();
    }

    /** A master's link over an embedded channel, taking answers. */
    static DedupLink masterLink(EmbeddedChannel ch) {
        DedupLink link = new DedupLink("w1", ch, Duration.ofSeconds(30));
        ch.pipeline().addLast(new FrameDecoder(), new FrameEncoder(), link.answers());
        return link;
    }

    @Test
    void lookup_wellFormed_answeredWithItsRequestId() {
        DedupAnswer a = (DedupAnswer) served(new DedupLookup(77, 5, 3, new byte[96]));
        assertThat(a.requestId()).isEqualTo(77);
        assertThat(a.pbns()).containsExactly(0, 0, 0);
        assertThat(engine.engine().stats().lookups()).isEqualTo(3);
    }

    /** A DEDUP_PROBE of {@code count} entries naming {@code samples}, with {@code wordBytes} bytes of words: refused so. */
    private void probeRefused(long count, int samples, int wordBytes, ErrorCode code, String message) {
        ByteBuf b = header(MessageType.DEDUP_PROBE, 32 + wordBytes).writeLong(1).writeLong(1).writeLong(0).writeInt((int) count)
                .writeInt(samples).writeZero(wordBytes);
        ErrorMessage e = refused(b);
        assertThat(e.code()).isEqualTo(code);
        assertThat(e.message()).contains(message);
    }

    @Test
    void probe_countOverLimit_refusedLimitExceeded() {
        probeRefused(ProtocolLimits.MAX_DEDUP_ENTRIES + 1, 0, 0, ErrorCode.LIMIT_EXCEEDED,
                "DEDUP_PROBE count 65537 is over its limit 65536");
    }

    @Test
    void probe_samplesOverCount_refusedBadFrame() {
        probeRefused(0, 1, 8, ErrorCode.BAD_FRAME, "DEDUP_PROBE samples 1 is over its count 0");
    }

    @Test
    void probe_fewerWordBytesThanSamples_refusedBadFrame() {
        probeRefused(4, 2, 12, ErrorCode.BAD_FRAME, "truncated body: fingerprint words needs 16 bytes, 12 left");
    }

    @Test
    void probe_trailingBytes_refusedBadFrame() {
        ByteBuf b = header(MessageType.DEDUP_PROBE, 32 + 8 + 1).writeLong(1).writeLong(1).writeLong(0).writeInt(1).writeInt(1)
                .writeZero(9);
        assertThat(refused(b).message()).contains("DEDUP_PROBE has 1 trailing bytes");
    }

    @Test
    void probe_wellFormed_answeredWithCandidatesAndItsRequestId() {
        DedupCandidates c = (DedupCandidates) served(new DedupProbe(78, 5, 123, 3, 1, new long[] {7}));
        assertThat(c.requestId()).isEqualTo(78);
        assertThat(c.candidates()).as("an empty engine has no candidate").isZero();
        assertThat(engine.engine().stats().lookups()).as("a probe is no lookup").isZero();
    }

    @Test
    void candidates_unknownRequestId_refusedAndPendingCallsKept() {
        EmbeddedChannel ch = new EmbeddedChannel();
        DedupLink link = masterLink(ch);
        CompletableFuture<Message> call = link.call(link.nextId(), new DedupProbe(1, 1, 0, 1, 1, new long[1]));
        long[] load = new long[DedupFrames.LOAD_FIELDS];
        assertThatThrownBy(() -> ch.writeInbound(encoded(new DedupCandidates(42, 1, load)))).isInstanceOf(ProtocolException.class)
                .hasMessageContaining("DEDUP_CANDIDATES answers request 42, which is not pending on this link");
        assertThat(call).isNotDone();
        ch.writeInbound(encoded(new DedupCandidates(1, 2, load)));
        assertThat(call).isCompletedWithValueMatching(m -> m instanceof DedupCandidates c && c.candidates() == 2);
        ch.finishAndReleaseAll(); // the call's frame, never read here
    }

    @Test
    void candidates_countOverIntRange_refusedBadFrame() {
        EmbeddedChannel decode = new EmbeddedChannel(new FrameDecoder());
        ByteBuf b = header(MessageType.DEDUP_CANDIDATES, 12 + 56).writeLong(1).writeInt(-1).writeZero(56);
        assertThatThrownBy(() -> decode.writeInbound(b)).isInstanceOf(ProtocolException.class)
                .hasMessageContaining("DEDUP_CANDIDATES candidates 4294967295 is out of range");
    }

    @Test
    void answer_unknownRequestId_refusedAndPendingCallsKept() {
        EmbeddedChannel ch = new EmbeddedChannel();
        DedupLink link = masterLink(ch);
        CompletableFuture<Message> call = link.call(link.nextId(), new DedupControl(1, DedupControl.LOAD, 0));
        long[] load = new long[DedupFrames.LOAD_FIELDS];
        assertThatThrownBy(() -> ch.writeInbound(encoded(new DedupDone(42, load)))).isInstanceOf(ProtocolException.class)
                .hasMessageContaining("DEDUP_DONE answers request 42, which is not pending on this link");
        assertThat(call).isNotDone();
        assertThat(link.pendingCount()).isEqualTo(1);
        ch.writeInbound(encoded(new DedupDone(1, load)));
        assertThat(call).isCompletedWithValueMatching(m -> m instanceof DedupDone);
        ch.finishAndReleaseAll();
    }

    @Test
    void call_linkCloses_pendingCallFailsAsLost() {
        EmbeddedChannel ch = new EmbeddedChannel();
        DedupLink link = masterLink(ch);
        CompletableFuture<Message> call = link.call(link.nextId(), new DedupControl(1, DedupControl.FLUSH, 0));
        ch.finishAndReleaseAll(); // closes the link (and releases the call's frame)
        assertThatThrownBy(call::join).isInstanceOf(CompletionException.class).hasCauseInstanceOf(DedupWorkerLostException.class)
                .hasMessageContaining("dedup worker w1 is lost: its link closed");
        assertThat(link.isUp()).isFalse();
    }

    @Test
    void done_startOverWithoutATimeOrWithAnUnknownReason_refusedBadFrame() {
        EmbeddedChannel decode = new EmbeddedChannel(new FrameDecoder());
        ByteBuf noTime = header(MessageType.DEDUP_DONE, 8 + 56 + 9).writeLong(1).writeZero(56).writeLong(0).writeByte(3);
        assertThatThrownBy(() -> decode.writeInbound(noTime)).isInstanceOf(ProtocolException.class)
                .hasMessageContaining("DEDUP_DONE start-over needs a time above 0 and a reason 1..4, got 0 and 3");
        EmbeddedChannel again = new EmbeddedChannel(new FrameDecoder());
        ByteBuf reason = header(MessageType.DEDUP_DONE, 8 + 56 + 9).writeLong(1).writeZero(56).writeLong(5).writeByte(9);
        assertThatThrownBy(() -> again.writeInbound(reason)).isInstanceOf(ProtocolException.class).hasMessageContaining("got 5 and 9");
        EmbeddedChannel cut = new EmbeddedChannel(new FrameDecoder());
        ByteBuf half = header(MessageType.DEDUP_DONE, 8 + 56 + 4).writeLong(1).writeZero(56).writeInt(5);
        assertThatThrownBy(() -> cut.writeInbound(half)).isInstanceOf(ProtocolException.class).hasMessageContaining("truncated body");
    }

    @Test
    void loadOnly_afterAStartOverOnAVersionTwoLink_answersItOnceAndTheMasterNotesIt() {
        java.util.concurrent.atomic.AtomicReference<DedupService.StartOver> unreported = new java.util.concurrent.atomic.AtomicReference<>(
                new DedupService.StartOver(1_700_000_000_000L, org.holdfast.common.protocol.StartOverReason.EPOCH_GAP));
        EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder(), new FrameEncoder(), new DedupService(engine, unreported));
        DedupDone first = (DedupDone) served(ch, new DedupControl(1, DedupControl.LOAD, 0));
        assertThat(first.startedOverAtMillis()).isEqualTo(1_700_000_000_000L);
        assertThat(first.startOverReason()).isEqualTo(DedupDone.STARTED_OVER_EPOCH_GAP);
        await().atMost(Duration.ofSeconds(5)).until(() -> unreported.get() == null);
        assertThat(((DedupDone) served(ch, new DedupControl(2, DedupControl.LOAD, 0))).startedOver()).as("told once").isFalse();

        EmbeddedChannel m = new EmbeddedChannel();
        DedupLink link = masterLink(m);
        java.util.List<org.holdfast.server.cluster.StartOverMark> heard = new java.util.ArrayList<>();
        link.onStartOver(heard::add);
        CompletableFuture<Message> call = link.call(link.nextId(), new DedupControl(1, DedupControl.LOAD, 0));
        m.writeInbound(encoded(new DedupDone(1, first.load(), first.startedOverAtMillis(), first.startOverReason())));
        assertThat(call).isCompleted();
        assertThat(heard).singleElement().satisfies(s -> {
            assertThat(s.atMillis()).isEqualTo(1_700_000_000_000L);
            assertThat(s.reason()).isEqualTo(org.holdfast.common.protocol.StartOverReason.EPOCH_GAP);
        });
        ch.finishAndReleaseAll();
        m.finishAndReleaseAll();
    }

    @Test
    void loadOnly_onAVersionOneLink_carriesNoStartOver() {
        DedupDone d = (DedupDone) served(new DedupControl(1, DedupControl.LOAD, 0));
        assertThat(d.startedOver()).isFalse();
        assertThat(encoded(d).readableBytes()).as("the version 1 frame: 6 header bytes, 64 body bytes").isEqualTo(6 + 64);
    }
}
