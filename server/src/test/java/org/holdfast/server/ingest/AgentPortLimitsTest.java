package org.holdfast.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import org.awaitility.Awaitility;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.protocol.BackupBegin;
import org.holdfast.common.protocol.Commit;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.common.protocol.MessageType;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.server.catalog.ReferenceGuard;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent port's resource limits on a real server core over loopback: what a connection may send
 * before HELLO, the in-flight budget, the minimum frame rate, the connection maximums and the
 * maximum volume size. Each refusal is an ERROR the client can read, and nothing is stored.
 */
class AgentPortLimitsTest {
    private static final int BS = 4096;

    @TempDir
    Path dir;

    private IngestHarness harness;

    private void start(IngestLimits limits) {
        harness = new IngestHarness(dir, 0, ReferenceGuard.NONE, IngestSettings.loopback().withLimits(limits));
    }

    @AfterEach
    void stop() {
        if (harness != null) {
            // every reservation is given back once the connections are gone
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> harness.server().inflightBytes() == 0);
            harness.close();
        }
    }

    @Test
    void frame_largeClaimBeforeHello_limitExceededAndClosedWithoutBuffering() throws Exception {
        start(IngestLimits.DEFAULTS);
        try (RawConnection c = new RawConnection(harness.port())) {
            c.header(ProtocolLimits.MAX_FRAME, MessageType.BLOCKS);
            c.sendQuietly(new byte[32 << 10]);
            ErrorMessage e = c.expectErrorAndClose();
            assertThat(e.code()).isEqualTo(ErrorCode.LIMIT_EXCEEDED);
            assertThat(e.message()).contains("before the HELLO was accepted");
        }
        assertThat(harness.server().stats().limited()).isEqualTo(1);
        assertThat(harness.server().inflightBytes()).isZero();
    }

    @Test
    void connect_overPerSourceMaximum_errorThenCloseAndRoomAgainAfterOneCloses() {
        start(IngestLimits.DEFAULTS.withConnections(100, 3));
        AgentDriver[] open = new AgentDriver[3];
        try {
            for (int i = 0; i < open.length; i++) {
                open[i] = harness.agent();
                open[i].hello();
            }
            try (AgentDriver over = harness.agent()) {
                ErrorMessage e = over.expectErrorAndClose();
                assertThat(e.code()).isEqualTo(ErrorCode.LIMIT_EXCEEDED);
                assertThat(e.message()).contains("127.0.0.1").contains("max-connections-per-source");
            }
            open[0].close();
            Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> harness.server().openConnections() == 2);
            open[0] = harness.agent();
            assertThat(open[0].hello().protocolVersion()).isEqualTo(ProtocolLimits.PROTOCOL_VERSION);
        } finally {
            for (AgentDriver a : open) {
                if (a != null) {
                    a.close();
                }
            }
        }
    }

    @Test
    void connect_overTotalMaximum_errorThenClose() {
        start(IngestLimits.DEFAULTS.withConnections(2, 10));
        // the third connects only once two are admitted: connections opened together are admitted in any order
        try (AgentDriver a = harness.agent(); AgentDriver b = harness.agent()) {
            a.hello();
            b.hello();
            try (AgentDriver over = harness.agent()) {
                ErrorMessage e = over.expectErrorAndClose();
                assertThat(e.code()).isEqualTo(ErrorCode.LIMIT_EXCEEDED);
                assertThat(e.message()).contains("max-connections");
            }
        }
    }

    @Test
    void frame_trickledSlowerThanMinimumRate_limitExceededAndClosed() throws Exception {
        start(IngestLimits.DEFAULTS.withFrameRate(64 << 10, Duration.ofMillis(500))); // 64 KiB frame: 1.5 s allowed
        long start = System.nanoTime();
        try (RawConnection c = new RawConnection(harness.port())) {
            c.hello();
            c.header(64 << 10, MessageType.BLOCKS);
            ErrorMessage e = null;
            for (int i = 0; i < 100 && e == null; i++) {
                c.sendQuietly(new byte[100]);
                e = c.pollError(100);
            }
            assertThat(e).as("an ERROR within 10 s").isNotNull();
            assertThat(e.code()).isEqualTo(ErrorCode.LIMIT_EXCEEDED);
            assertThat(e.message()).contains("slower than the minimum").contains("min-frame-rate");
        }
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(8));
    }

    /**
     * A frame trickled too slowly while the connection's lane is busy (here its blocks wait in the
     * reference guard): the LIMIT_EXCEEDED waits for the lane, and the watch's next tick must not close
     * the connection before it is written (it did, one tick after the refusal, and the agent saw a close
     * without a reason; under load an idle lane takes longer than a tick too).
     */
    @Test
    void frame_trickledWhileTheLaneIsBusy_theErrorWaitsForTheLaneInsteadOfACloseWithoutReason() throws Exception {
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        ReferenceGuard holding = holdingTheFirstProtect(release, 20);
        harness = new IngestHarness(dir, 0, holding,
                IngestSettings.loopback().withLimits(IngestLimits.DEFAULTS.withFrameRate(64 << 10, Duration.ofMillis(500))));
        byte[] image = BackupRestoreLoopbackTest.image(5, 4 * BS);
        try (AgentDriver a = harness.agent()) {
            a.hello();
            a.begin("busy", BS, image.length, 0);
            a.sendEntriesAndBlocks(image, BS, 0, 4, false, null); // the lane holds in the guard with these blocks
            a.sendRaw(new byte[] {0, 1, 0, 0, (byte) ProtocolLimits.VERSION, (byte) MessageType.BLOCKS.code()}); // 64 KiB: 1.5 s allowed
            long until = System.nanoTime() + Duration.ofMillis(2500).toNanos(); // past the deadline and several ticks (125 ms)
            boolean cut = false;
            while (System.nanoTime() < until && !cut) {
                try {
                    a.sendRaw(new byte[100]);
                    Thread.sleep(100);
                } catch (RuntimeException closed) {
                    cut = true;
                }
            }
            assertThat(cut).as("closed while its ERROR waited for the lane: the agent would get no reason").isFalse();
            assertThat(harness.server().openConnections()).as("open while its ERROR waits for the lane").isEqualTo(1);
            Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> harness.server().inflightBytes() < 64 << 10); // the frame's went
            release.countDown();
            ErrorMessage e = a.expectErrorAndClose();
            assertThat(e.code()).isEqualTo(ErrorCode.LIMIT_EXCEEDED);
            assertThat(e.message()).contains("slower than the minimum").contains("min-frame-rate");
        }
        assertThat(harness.catalog().volume(new VolumeId("busy")).map(v -> v.latestSequence()).orElse(0L)).as("nothing committed")
                .isZero();
    }

    /**
     * Attack on the drop of an overdue frame while its ERROR waits for the lane: the lane never gets
     * to the ERROR (held in the reference guard far past the idle timeout), and the agent keeps
     * trickling bytes after its frame was discarded and reads nothing. The connection must still
     * close at the idle timeout after the refusal (closeAtTheLatest), not when the lane lets go.
     */
    @Test
    void frame_trickledForEverWhileTheLaneNeverSendsTheError_closedAtTheIdleTimeoutAfterTheRefusal() throws Exception {
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        ReferenceGuard holding = holdingTheFirstProtect(release, 30);
        IngestSettings base = IngestSettings.loopback();
        Duration idle = Duration.ofSeconds(2);
        harness = new IngestHarness(dir, 0, holding, new IngestSettings(base.host(), base.port(), base.sessionThreads(),
                base.segmentMaxEntries(), base.maxQueuedFrames(), base.maxQueuedBytes(), idle, base.serverVersion(), null,
                IngestLimits.DEFAULTS.withFrameRate(64 << 10, Duration.ofMillis(500))));
        byte[] image = BackupRestoreLoopbackTest.image(5, 4 * BS);
        try (AgentDriver a = harness.agent()) {
            a.hello();
            a.begin("forever", BS, image.length, 0);
            a.sendEntriesAndBlocks(image, BS, 0, 4, false, null); // the lane holds in the guard with these blocks
            a.stopReading();
            long start = System.nanoTime();
            a.sendRaw(new byte[] {0, 1, 0, 0, (byte) ProtocolLimits.VERSION, (byte) MessageType.BLOCKS.code()}); // 64 KiB: 1.5 s allowed
            // refused at ~1.5 s, dropped a tick later; closeAtTheLatest closes 2 s after the refusal
            long until = start + Duration.ofSeconds(12).toNanos();
            while (harness.server().openConnections() > 0 && System.nanoTime() < until) {
                try {
                    a.sendRaw(new byte[100]); // more bytes after the drop: a new frame header, then its body
                    Thread.sleep(50);
                } catch (RuntimeException closed) {
                    break;
                }
            }
            Duration open = Duration.ofNanos(System.nanoTime() - start);
            try {
                Awaitility.await().atMost(Duration.ofSeconds(1))
                        .untilAsserted(() -> assertThat(harness.server().openConnections()).as("open while the lane is held").isZero());
                assertThat(open).as("held open past the refusal's idle-timeout bound").isLessThan(Duration.ofSeconds(8));
                assertThat(harness.server().inflightBytes()).as("the trickled frame's reservation").isLessThan(64 << 10);
            } finally {
                release.countDown();
            }
        }
    }

    /**
     * A frame trickled slower than the minimum rate by an agent that also stopped reading: the
     * LIMIT_EXCEEDED cannot be written behind the restore data piled up for it, and the frame's
     * reservation must still not outlive the frame's deadline (here the idle timeout is 10 min).
     */
    @Test
    void frame_trickledByAnAgentThatStoppedReading_closedAtTheFrameDeadlineAndReservationGivenBack() {
        start(IngestLimits.DEFAULTS.withFrameRate(64 << 10, Duration.ofMillis(500))); // 64 KiB frame: 1.5 s allowed
        byte[] big = BackupRestoreLoopbackTest.image(3, 16 << 20);
        try (AgentDriver a = harness.agent()) {
            a.hello();
            a.backup("big", big, BS, false);
        }
        try (AgentDriver a = harness.agent()) {
            a.hello();
            a.stopReading();
            a.send(new org.holdfast.common.protocol.Restore("big", 1, 0));
            a.sendRaw(new byte[] {0, 1, 0, 0, (byte) ProtocolLimits.VERSION, (byte) MessageType.BLOCKS.code()});
            long deadline = System.nanoTime() + Duration.ofSeconds(8).toNanos();
            while (harness.server().openConnections() > 0 && System.nanoTime() < deadline) {
                try {
                    a.sendRaw(new byte[100]);
                    Thread.sleep(100);
                } catch (RuntimeException e) {
                    break; // closed
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            }
            Awaitility.await().atMost(Duration.ofSeconds(2))
                    .untilAsserted(() -> assertThat(harness.server().openConnections()).as("connections open").isZero());
        }
    }

    @Test
    void frames_overInflightBudget_waitWithoutReservingWhileASmallBackupRunsAndRestores() throws Exception {
        long budget = 20L << 20; // room for one largest frame plus a little
        start(IngestLimits.DEFAULTS.withInflightBytes(budget));
        try (RawConnection first = new RawConnection(harness.port()); RawConnection second = new RawConnection(harness.port())) {
            first.hello();
            first.header(ProtocolLimits.MAX_FRAME, MessageType.BLOCKS);
            first.sendQuietly(new byte[1 << 20]);
            Awaitility.await().atMost(Duration.ofSeconds(5))
                    .until(() -> harness.server().inflightBytes() >= 4L + ProtocolLimits.MAX_FRAME);
            second.hello();
            second.header(ProtocolLimits.MAX_FRAME, MessageType.BLOCKS);
            second.sendQuietly(new byte[1 << 20]);
            Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> harness.server().inflight().waiting() >= 1);
            assertThat(harness.server().inflightBytes()).as("the second claim is not reserved").isLessThanOrEqualTo(budget)
                    .isLessThan(2L * ProtocolLimits.MAX_FRAME);

            byte[] image = BackupRestoreLoopbackTest.image(7, 128 * BS);
            try (AgentDriver a = harness.agent()) {
                a.hello();
                a.backup("small", image, BS, false);
                assertThat(a.restore("small", 1).image()).isEqualTo(image);
            }
            assertThat(harness.server().inflightBytes()).isLessThanOrEqualTo(budget);
        }
    }

    @Test
    void backupBegin_overMaxVolumeSize_limitExceededAndNothingStored() {
        start(IngestLimits.DEFAULTS.withMaxVolumeBytes(1L << 20));
        try (AgentDriver a = harness.agent()) {
            a.hello();
            a.send(new BackupBegin("big", BS, (1L << 20) + BS, 0));
            ErrorMessage e = a.expectErrorAndClose();
            assertThat(e.code()).isEqualTo(ErrorCode.LIMIT_EXCEEDED);
            assertThat(e.message()).contains("'big'").contains("max-volume-size").contains("nothing was stored");
        }
        assertThat(harness.catalog().volume(new VolumeId("big"))).isEmpty();
        assertThat(harness.server().volumeLocks().isLocked("big")).isFalse();
        try (AgentDriver a = harness.agent()) {
            a.hello();
            byte[] image = BackupRestoreLoopbackTest.image(3, 1 << 20);
            a.backup("fits", image, BS, true); // exactly the maximum is allowed
            assertThat(a.restore("fits", 1).image()).isEqualTo(image);
        }
    }

    @Test
    void commit_emptyBackupClaimingExabytes_limitExceededAndNothingStored() {
        start(IngestLimits.DEFAULTS);
        try (AgentDriver a = harness.agent()) {
            a.hello();
            a.begin("huge", BS, 0, 0);
            a.send(new Commit(4L << 60));
            ErrorMessage e = a.expectErrorAndStop();
            assertThat(e.code()).isEqualTo(ErrorCode.LIMIT_EXCEEDED);
            assertThat(e.message()).contains(Long.toString(4L << 60)).contains("max-volume-size");
        }
        assertThat(harness.catalog().volume(new VolumeId("huge"))).isEmpty();
        Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> !harness.server().volumeLocks().isLocked("huge"));
    }

    /** A reference guard whose first protect (the lane storing a backup's first blocks) waits for {@code release}, at most {@code seconds}. */
    private static ReferenceGuard holdingTheFirstProtect(java.util.concurrent.CountDownLatch release, int seconds) {
        java.util.concurrent.atomic.AtomicBoolean hold = new java.util.concurrent.atomic.AtomicBoolean(true);
        return new ReferenceGuard() {
            @Override
            public void protect(long sessionId, long[] pbns, int off, int count) {
                if (hold.compareAndSet(true, false)) {
                    try {
                        release.await(seconds, java.util.concurrent.TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            }

            @Override
            public void release(long sessionId, boolean committed) {
            }
        };
    }

    /** A plain socket speaking raw frames, for what a well-behaved client would never send. */
    static final class RawConnection implements AutoCloseable {
        private final Socket socket;
        private final OutputStream out;
        private final DataInputStream in;

        RawConnection(int port) throws IOException {
            socket = new Socket(InetAddress.getLoopbackAddress(), port);
            socket.setSoTimeout(10_000);
            out = socket.getOutputStream();
            in = new DataInputStream(socket.getInputStream());
        }

        /** Sends HELLO with the default agent token and reads HELLO_OK. */
        void hello() throws IOException {
            byte[] name = "raw".getBytes(StandardCharsets.UTF_8);
            byte[] token = TestTokens.DEFAULT_AGENT.getBytes(StandardCharsets.UTF_8);
            ByteBuffer b = ByteBuffer.allocate(6 + 4 + 2 + 2 + name.length + 2 + token.length);
            b.putInt(2 + 4 + 2 + 2 + name.length + 2 + token.length).put((byte) ProtocolLimits.VERSION).put((byte) MessageType.HELLO.code())
                    .putInt(ProtocolLimits.MAGIC).putShort((short) ProtocolLimits.VERSION)
                    .putShort((short) name.length).put(name).putShort((short) token.length).put(token);
            out.write(b.array());
            out.flush();
            int length = in.readInt();
            in.readUnsignedByte();
            int type = in.readUnsignedByte();
            in.skipNBytes(length - 2);
            assertThat(type).as("HELLO_OK").isEqualTo(MessageType.HELLO_OK.code());
        }

        /** A frame header claiming {@code length} (version and type included) and sending none of the body. */
        void header(int length, MessageType type) throws IOException {
            out.write(ByteBuffer.allocate(6).putInt(length).put((byte) ProtocolLimits.VERSION).put((byte) type.code()).array());
            out.flush();
        }

        /** Sends bytes; a connection the server already closed is not an error here. */
        void sendQuietly(byte[] bytes) {
            try {
                out.write(bytes);
                out.flush();
            } catch (IOException e) {
                // closed by the server: the test reads why
            }
        }

        /** The ERROR the server sent, or null if none arrived within {@code millis}. */
        ErrorMessage pollError(int millis) throws IOException {
            socket.setSoTimeout(millis);
            try {
                return readError();
            } catch (java.net.SocketTimeoutException e) {
                return null;
            } finally {
                socket.setSoTimeout(10_000);
            }
        }

        /** Reads an ERROR and then the close. */
        ErrorMessage expectErrorAndClose() throws IOException {
            ErrorMessage e = readError();
            assertThat(e).as("an ERROR frame").isNotNull();
            try {
                assertThat(in.read()).as("closed after the ERROR").isEqualTo(-1);
            } catch (SocketException reset) {
                // reset by the server after its ERROR: closed too
            }
            return e;
        }

        private ErrorMessage readError() throws IOException {
            int length;
            try {
                length = in.readInt();
            } catch (EOFException | SocketException closed) {
                return null;
            }
            in.readUnsignedByte();
            int type = in.readUnsignedByte();
            byte[] body = new byte[length - 2];
            in.readFully(body);
            assertThat(type).as("an ERROR frame").isEqualTo(MessageType.ERROR.code());
            ByteBuffer b = ByteBuffer.wrap(body);
            ErrorCode code = ErrorCode.fromCode(Short.toUnsignedInt(b.getShort()));
            byte[] msg = new byte[Short.toUnsignedInt(b.getShort())];
            b.get(msg);
            return new ErrorMessage(code, new String(msg, StandardCharsets.UTF_8));
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
