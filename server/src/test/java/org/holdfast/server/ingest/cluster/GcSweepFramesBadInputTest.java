package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.common.protocol.FrameDecoder;
import org.holdfast.common.protocol.FrameEncoder;
import org.holdfast.common.protocol.GcSweep;
import org.holdfast.common.protocol.GcSweepFailed;
import org.holdfast.common.protocol.GcSwept;
import org.holdfast.common.protocol.Message;
import org.holdfast.common.protocol.MessageType;
import org.holdfast.common.protocol.ProtocolException;
import org.holdfast.gc.bosc.BoscSettings;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FsyncPolicy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The GC sweep frames on the worker link, byte by byte: a worker answers a malformed GC_SWEEP with one
 * ERROR and closes (after its linger) before any sweep starts; a sweep while one runs is refused BUSY
 * at once and the link stays; a sweep over range data of another range is refused with nothing
 * freed; the master's decoder and end refuse malformed or unexpected answers.
 */
class GcSweepFramesBadInputTest {
    private static final PbnRange RANGE = new PbnRange(1L << 40, (1L << 40) + (1L << 20));

    @TempDir
    Path dir;
    private WorkerRangeData data;
    private WorkerGcMetadata gc;
    private WorkerRangeSweep sweeps;

    @BeforeEach
    void open() {
        data = new WorkerRangeData(dir.resolve("range-data"), new DataStore.Settings(dir.resolve("unused"), 1L << 20, FsyncPolicy.COMMIT, 64, 0));
        gc = new WorkerGcMetadata(dir.resolve("range-data").resolve("gc"), BoscSettings.defaults().withCommitters(1), Duration.ofHours(1),
                Clock.systemUTC());
        data.claim(RANGE);
        gc.claim(RANGE);
        sweeps = new WorkerRangeSweep(data, gc, null, WorkerRangeSweep.Settings.DEFAULTS);
    }

    @AfterEach
    void close() {
        data.close();
        gc.close();
    }

    private EmbeddedChannel worker(PbnRange range) {
        return new EmbeddedChannel(new FrameDecoder(), new FrameEncoder(), new GcSweepService(sweeps, range));
    }

    private static ByteBuf header(MessageType type, long bodyBytes) {
        return WorkerEndFrames.header(type, bodyBytes);
    }

    /** Feeds {@code bytes} to a worker: one ERROR with {@code code} and {@code message}, the link closed after its linger, no sweep ran. */
    private void refused(ByteBuf bytes, ErrorCode code, String message) {
        EmbeddedChannel ch = worker(RANGE);
        ErrorMessage e = WorkerEndFrames.errorAndClose(ch, bytes);
        assertThat(e.code()).isEqualTo(code);
        assertThat(e.message()).contains(message);
        assertThat(sweeps.progress().running()).isFalse();
        assertThat(sweeps.progress().last()).as("no sweep ran").isNull();
    }

    @Test
    void sweep_unknownFlag_refusedBadFrame() {
        refused(header(MessageType.GC_SWEEP, 17).writeLong(1).writeLong(0).writeByte(2), ErrorCode.BAD_FRAME,
                "GC_SWEEP flags 2 name an unknown option (1 = dry run)");
    }

    @Test
    void sweep_timeBeyondALong_refusedBadFrame() {
        refused(header(MessageType.GC_SWEEP, 17).writeLong(1).writeLong(-5).writeByte(0), ErrorCode.BAD_FRAME,
                "GC_SWEEP time 18446744073709551611 is not an epoch millisecond");
    }

    @Test
    void sweep_shortOrLongBody_refusedBadFrameOrLimit() {
        refused(header(MessageType.GC_SWEEP, 16).writeLong(1).writeLong(0), ErrorCode.BAD_FRAME, "truncated body: flags");
        refused(header(MessageType.GC_SWEEP, 18).writeLong(1).writeLong(0).writeByte(0).writeByte(0), ErrorCode.LIMIT_EXCEEDED,
                "GC_SWEEP body of 18 bytes is over its limit 17");
    }

    private static Message served(EmbeddedChannel ch, Message request) {
        return DedupFramesBadInputTest.served(ch, request);
    }

    @Test
    void sweep_whileOneRuns_refusedBusyAtOnceAndTheLinkStays() {
        EmbeddedChannel ch = worker(RANGE);
        assertThat(sweeps.tryBegin()).as("a sweep runs (taken as a link would)").isTrue();
        GcSweepFailed f = (GcSweepFailed) served(ch, new GcSweep(7, GcSweep.NO_TIME, 0));
        assertThat(f.requestId()).isEqualTo(7);
        assertThat(f.reason()).isEqualTo(GcSweepFailed.BUSY);
        assertThat(f.message()).contains("a sweep of PBNs " + RANGE + " runs already on this worker").contains("nothing was started");
        assertThat(ch.isOpen()).isTrue();
        sweeps.cancelBegin();
        GcSwept s = (GcSwept) served(ch, new GcSweep(8, GcSweep.NO_TIME, GcSweep.DRY_RUN));
        assertThat(s.requestId()).isEqualTo(8);
        assertThat(s.dryRun()).isTrue();
        assertThat(s.reclaimable()).as("an empty range").isZero();
        ch.finishAndReleaseAll();
    }

    @Test
    void sweep_rangeDataOfAnotherRange_refusedNothingFreed() {
        PbnRange other = new PbnRange(RANGE.limit(), RANGE.limit() + (1L << 20));
        EmbeddedChannel ch = worker(other);
        GcSweepFailed f = (GcSweepFailed) served(ch, new GcSweep(9, GcSweep.NO_TIME, 0));
        assertThat(f.reason()).isEqualTo(GcSweepFailed.REFUSED);
        assertThat(f.message()).contains("GC_SWEEP refused on the worker").contains("is not open over PBNs " + other)
                .contains("nothing was freed");
        assertThat(ch.isOpen()).isTrue();
        assertThat(sweeps.progress().running()).as("the gate is free again").isFalse();
        ch.finishAndReleaseAll();
    }

    @Test
    void sweep_beforeRegistered_theWorkerClosesTheLinkAndSweepsNothing() throws Exception {
        try (java.net.ServerSocket fake = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            java.nio.file.Path token = dir.resolve("worker.token");
            java.nio.file.Files.writeString(token, "hf_fake");
            WorkerConnector w = new WorkerConnector(new WorkerConnector.Settings("127.0.0.1", fake.getLocalPort(), null, "w1", token, null,
                    "auto", "test", Duration.ofSeconds(5), Duration.ofSeconds(30), Duration.ofSeconds(30)),
                    new org.holdfast.server.cluster.LoadProbe(dir), null, data, gc);
            try {
                w.start();
                try (java.net.Socket s = fake.accept()) {
                    s.setSoTimeout(10_000);
                    ByteBuf b = encoded(new GcSweep(1, GcSweep.NO_TIME, 0));
                    byte[] bytes = new byte[b.readableBytes()];
                    b.readBytes(bytes);
                    s.getOutputStream().write(bytes); // before any REGISTERED
                    java.io.InputStream in = s.getInputStream();
                    byte[] buf = new byte[4096];
                    while (in.read(buf) >= 0) {
                        // the worker's REGISTER, then the end of the stream: it closed the link
                    }
                }
                org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> w.status().lastError() != null);
                assertThat(w.status().lastError()).contains("the master sent GcSweep").contains("unexpectedly; closing");
                assertThat(w.rangeSweep().progress().last()).as("no sweep ran").isNull();
                assertThat(w.rangeSweep().progress().lastFailure()).isNull();
            } finally {
                w.close();
            }
        }
    }

    /** A master's decoder fed {@code bytes}: refused with {@code message}. */
    private static void answerRefused(ByteBuf bytes, ErrorCode code, String message) {
        WorkerEndFrames.answerRefused(bytes, code, message);
    }

    private static ByteBuf swept(long freed, long reclaimable, long bytes) {
        return header(MessageType.GC_SWEPT, 89).writeLong(1).writeByte(0).writeLong(1).writeLong(0).writeLong(0).writeLong(freed)
                .writeLong(reclaimable).writeLong(0).writeLong(0).writeLong(0).writeLong(bytes).writeLong(0);
    }

    @Test
    void answers_badValues_refusedByTheMastersDecoder() {
        answerRefused(swept(5, 4, 0), ErrorCode.BAD_FRAME, "GC_SWEPT freed 5 blocks of only 4 reclaimable");
        answerRefused(swept(-1, 4, 0), ErrorCode.BAD_FRAME, "GC_SWEPT figure 18446744073709551615 is out of range");
        answerRefused(swept(0, 0, -2), ErrorCode.BAD_FRAME, "GC_SWEPT bytes freed 18446744073709551614 is out of range");
        answerRefused(header(MessageType.GC_SWEPT, 88).writeLong(1).writeByte(0).writeZero(79), ErrorCode.BAD_FRAME, "truncated body");
        answerRefused(header(MessageType.GC_SWEEP_FAILED, 11).writeLong(1).writeByte(9).writeShort(0), ErrorCode.BAD_FRAME,
                "GC_SWEEP_FAILED reason 9 is unknown");
        answerRefused(header(MessageType.GC_SWEEP_FAILED, 11 + 2000).writeLong(1).writeByte(1).writeShort(2000).writeZero(2000),
                ErrorCode.LIMIT_EXCEEDED, "over its limit");
    }

    /** A master's end of a worker's sweeps over an embedded channel, taking answers. */
    private static RemoteRangeSweep masterEnd(EmbeddedChannel ch) {
        RemoteRangeSweep s = new RemoteRangeSweep("w1", RANGE, ch, Duration.ofSeconds(30));
        ch.pipeline().addLast(new FrameDecoder(), new FrameEncoder(), s.answers());
        return s;
    }

    private static ByteBuf encoded(Message m) {
        return DedupFramesBadInputTest.encoded(m);
    }

    @Test
    void masterEnd_answerToASweepNeverAsked_refusedAndThePendingOneKept() {
        EmbeddedChannel ch = new EmbeddedChannel();
        RemoteRangeSweep s = masterEnd(ch);
        CompletableFuture<GcSwept> a = s.sweep(1_800_000_000_000L, false);
        EmbeddedChannel decode = new EmbeddedChannel(new FrameDecoder());
        decode.writeInbound((ByteBuf) ch.readOutbound());
        GcSweep sent = decode.readInbound();
        assertThat(sent.now()).isEqualTo(1_800_000_000_000L);
        assertThat(sent.dryRun()).isFalse();
        assertThatThrownBy(() -> ch.writeInbound(encoded(new GcSwept(sent.requestId() + 5, 0, 1, 0, 0, 0, 0, 0, 0, 0, -1, 0))))
                .isInstanceOf(ProtocolException.class).hasMessageContaining("which is not pending on this link");
        assertThat(a).isNotDone();
        ch.writeInbound(encoded(GcSweepFailed.of(sent.requestId(), GcSweepFailed.BUSY, "a sweep runs already")));
        assertThatThrownBy(a::join).isInstanceOf(CompletionException.class).cause()
                .isInstanceOfSatisfying(RangeSweepRefusedException.class, e -> assertThat(e.reason()).isEqualTo(GcSweepFailed.BUSY))
                .hasMessageContaining("worker w1 (PBNs " + RANGE + ") is busy: a sweep runs already");
        ch.finishAndReleaseAll();
    }

    @Test
    void masterEnd_linkCloses_pendingSweepFailsAsLost() {
        EmbeddedChannel ch = new EmbeddedChannel();
        RemoteRangeSweep s = masterEnd(ch);
        CompletableFuture<GcSwept> a = s.sweep(GcSweep.NO_TIME, true);
        ch.finishAndReleaseAll();
        assertThatThrownBy(a::join).isInstanceOf(CompletionException.class).hasCauseInstanceOf(RangeWorkerLostException.class)
                .hasMessageContaining("sweeping worker w1 (PBNs " + RANGE + ") is lost: its link closed");
        assertThat(s.isUp()).isFalse();
        assertThatThrownBy(() -> s.sweep(GcSweep.NO_TIME, false).join()).hasCauseInstanceOf(RangeWorkerLostException.class);
    }
}
