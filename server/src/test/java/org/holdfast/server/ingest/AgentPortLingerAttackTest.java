package org.holdfast.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufAllocatorMetricProvider;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.protocol.BackupBegin;
import org.holdfast.common.protocol.BackupReady;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorLinger;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.common.protocol.Hello;
import org.holdfast.common.protocol.HelloOk;
import org.holdfast.common.protocol.MessageType;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.server.catalog.ReferenceGuard;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Attacks on a refused agent connection that lingers, over real sockets: it cannot be held open
 * past the linger by a trickle, a flood buffers nothing, nothing pipelined behind the refusal is
 * decoded or answered, churning refused connections leaks no slot, and a refused token costs a
 * socket for about {@link ErrorLinger#QUIET_MILLIS} once the peer stops writing.
 */
class AgentPortLingerAttackTest {
    private static final Duration BOUND = Duration.ofMillis(ErrorLinger.ERROR_LINGER_MILLIS + 3_000);
    private static final int PER_SOURCE = 4;

    @TempDir
    Path dir;
    private IngestHarness harness;

    @BeforeEach
    void start() {
        harness = new IngestHarness(dir, 0, ReferenceGuard.NONE,
                IngestSettings.loopback().withLimits(IngestLimits.DEFAULTS.withConnections(100, PER_SOURCE)));
    }

    @AfterEach
    void stop() {
        harness.close();
    }

    private Socket connect() throws Exception {
        Socket s = new Socket();
        s.connect(new InetSocketAddress("127.0.0.1", harness.port()), 5000);
        return s;
    }

    private static byte[] hello(String token) {
        return RefusedWriter.frame(new Hello(ProtocolLimits.PROTOCOL_VERSION, "linger-attack", token));
    }

    private static void greet(RefusedWriter w) throws Exception {
        w.send(hello(TestTokens.DEFAULT_AGENT));
        assertThat(w.read()).isInstanceOf(HelloOk.class);
    }

    @Test
    void refusedFrame_oneByteEvery250Millis_stillClosedWithinTheLinger() throws Exception {
        try (Socket s = connect()) {
            RefusedWriter w = new RefusedWriter(s);
            greet(w);
            w.send(RefusedWriter.oversizedHeader(MessageType.ENTRIES.code()));
            OutputStream out = s.getOutputStream();
            Thread trickle = new Thread(() -> {
                try {
                    for (int i = 0; i < 40; i++) { // 10 s of a byte every 250 ms: each gap is under QUIET_MILLIS
                        out.write(0);
                        out.flush();
                        Thread.sleep(250);
                    }
                } catch (IOException | InterruptedException cut) {
                    // the server closed: what this test wants
                }
            }, "trickle");
            trickle.setDaemon(true);
            trickle.start();
            assertThat(w.expectError().code()).isEqualTo(ErrorCode.LIMIT_EXCEEDED);
            assertThat(w.closedAfterError()).as("a trickle under the quiet period does not extend the linger").isLessThan(BOUND);
            trickle.interrupt();
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> harness.server().openConnections() == 0);
    }

    @Test
    void refusedFrame_floodOfHundredsOfMiB_nothingBufferedOrReserved() throws Exception {
        long directBefore = directMemory();
        AtomicLong maxDirect = new AtomicLong(directBefore);
        AtomicLong sent = new AtomicLong();
        AtomicLong maxInflight = new AtomicLong(); // read in the flood thread, asserted here (an assertion there would be lost)
        try (Socket s = connect()) {
            RefusedWriter w = new RefusedWriter(s);
            greet(w);
            OutputStream out = s.getOutputStream();
            Thread flood = new Thread(() -> {
                byte[] chunk = new byte[256 << 10];
                try {
                    out.write(RefusedWriter.oversizedHeader(MessageType.BLOCKS.code()));
                    for (int i = 0; i < 2_000; i++) { // up to 500 MiB
                        out.write(chunk);
                        sent.addAndGet(chunk.length);
                        maxDirect.accumulateAndGet(directMemory(), Math::max);
                        maxInflight.accumulateAndGet(harness.server().inflightBytes(), Math::max);
                    }
                } catch (IOException cut) {
                    // cut off at the linger
                }
            }, "flood");
            flood.setDaemon(true);
            flood.start();
            assertThat(w.expectError().code()).isEqualTo(ErrorCode.LIMIT_EXCEEDED);
            flood.join(BOUND.toMillis() + 5_000);
            assertThat(flood.isAlive()).as("the flood was cut off").isFalse();
        }
        assertThat(maxDirect.get() - directBefore).as("direct memory grown while %d bytes were discarded", sent.get())
                .isLessThan(32L << 20);
        assertThat(maxInflight.get()).as("in-flight budget reserved while discarding").isZero();
        assertThat(harness.server().inflightBytes()).isZero();
        await().atMost(Duration.ofSeconds(5)).until(() -> harness.server().openConnections() == 0);
    }

    @Test
    void refusedBackupBegin_withBeginAndHelloPipelinedBehind_nothingDecodedAnsweredOrLocked() throws Exception {
        ByteArrayOutputStream burst = new ByteArrayOutputStream();
        burst.write(RefusedWriter.frame(new BackupBegin("pipelined", 3, 1 << 20, 0))); // block size 3: BAD_FRAME, on the lane
        burst.write(RefusedWriter.frame(new BackupBegin("pipelined", 4096, 1 << 20, 0)));
        burst.write(hello(TestTokens.DEFAULT_AGENT));
        try (Socket s = connect()) {
            RefusedWriter w = new RefusedWriter(s);
            greet(w);
            w.send(burst.toByteArray());
            assertThat(w.expectError().code()).isEqualTo(ErrorCode.BAD_FRAME);
            assertThat(w.beforeError()).as("no BACKUP_READY for the frame behind the refused one").isEmpty();
            assertThat(w.closedAfterError()).as("nothing after the ERROR").isLessThan(BOUND);
        }
        assertThat(harness.catalog().volume(new VolumeId("pipelined"))).as("no volume created").isEmpty();
        try (Socket s = connect()) {
            RefusedWriter w = new RefusedWriter(s);
            greet(w);
            w.send(RefusedWriter.frame(new BackupBegin("pipelined", 4096, 1 << 20, 0)));
            assertThat(w.read()).as("the volume is not left locked").isInstanceOf(BackupReady.class);
        }
    }

    @Test
    void refusedBlocksMidBackup_commitSentRightBehind_noSnapshotAndVolumeUnlocked() throws Exception {
        int bs = 4096;
        byte[] image = new byte[64 * bs];
        new java.util.Random(15).nextBytes(image);
        byte[] lie = new byte[bs];
        new java.util.Random(16).nextBytes(lie);
        try (AgentDriver a = harness.agent()) {
            a.hello();
            a.begin("mid", bs, image.length, 0);
            a.sendEntriesAndBlocks(image, bs, 0, 64, false, lie); // the first payload does not match its fingerprint
            a.send(new org.holdfast.common.protocol.Commit(image.length)); // at once, before the ERROR could be read
            ErrorMessage e = a.expectErrorAndStop(); // and nothing after it: no COMMITTED
            assertThat(e.code()).isEqualTo(ErrorCode.FINGERPRINT_MISMATCH);
        }
        assertThat(harness.catalog().volume(new VolumeId("mid")).map(v -> v.latestSequence()).orElse(0L)).as("no snapshot committed").isZero();
        try (AgentDriver a = harness.agent()) {
            a.hello();
            assertThat(a.backup("mid", image, bs, false).sequence()).as("the volume is not left locked").isEqualTo(1);
        }
    }

    @Test
    void refusedTokens_churnedThreeTimesThePerSourceLimit_noSlotLeaksAndEachCostsASocketBriefly() throws Exception {
        for (int i = 0; i < 3 * PER_SOURCE; i++) {
            try (Socket s = connect()) {
                RefusedWriter w = new RefusedWriter(s);
                w.send(hello("not-a-token-0123456789"));
                assertThat(w.expectError().code()).as("connection %d", i).isEqualTo(ErrorCode.UNAUTHORIZED);
                // the peer stopped writing: the server closes after the quiet period, not the whole linger
                assertThat(w.closedAfterError()).isLessThan(Duration.ofMillis(ErrorLinger.ERROR_LINGER_MILLIS));
            }
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> harness.server().openConnections() == 0);
        try (Socket s = connect()) {
            RefusedWriter w = new RefusedWriter(s);
            greet(w); // not refused as over the per-source maximum
        }
    }

    /** Direct memory of the allocator the server's channels use (Netty's default). */
    private static long directMemory() {
        return ((ByteBufAllocatorMetricProvider) ByteBufAllocator.DEFAULT).metric().usedDirectMemory();
    }
}
