package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.holdfast.common.protocol.DedupControl;
import org.holdfast.common.protocol.DedupDone;
import org.holdfast.common.protocol.DedupFrames;
import org.holdfast.common.protocol.FrameDecoder;
import org.holdfast.common.protocol.FrameEncoder;
import org.holdfast.common.protocol.Message;
import org.holdfast.common.protocol.Register;
import org.holdfast.common.protocol.Registered;
import org.holdfast.server.cluster.MembershipSettings;
import org.holdfast.server.security.ApiTokens;
import org.holdfast.server.security.AuditEvent;
import org.holdfast.server.security.Role;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A hostile worker (a raw socket holding a worker token) against the master's cluster port: start-over
 * reports on every answer are audited once per registration, and none is taken from a worker that
 * registered at cluster version 1.
 */
class ClusterStartOverReportTest {
    private static final String AUDITED = "cluster.worker.index-started-over";
    @TempDir
    Path dir;
    private TestMaster master;
    private String token;
    private final List<AuditEvent> audit = new CopyOnWriteArrayList<>();

    @BeforeEach
    void start() {
        master = new TestMaster(dir.resolve("catalog"), new MembershipSettings(Duration.ofSeconds(10), Duration.ofSeconds(20),
                Duration.ofSeconds(30), MembershipSettings.DEFAULT_FIRST_PBN, MembershipSettings.DEFAULT_RANGE_SIZE), audit::add);
        token = master.tokens.issue(new ApiTokens.TokenRequest("workers", Role.WORKER, null, null, null), "test", "test").token();
    }

    @AfterEach
    void stop() {
        master.close();
    }

    private static void write(Socket s, Message m) throws IOException {
        ByteBuf b = Unpooled.buffer();
        FrameEncoder.write(m, b);
        byte[] out = new byte[b.readableBytes()];
        b.readBytes(out);
        s.getOutputStream().write(out);
        s.getOutputStream().flush();
    }

    private static Message read(Socket s) throws IOException {
        DataInputStream in = new DataInputStream(s.getInputStream());
        int len = in.readInt();
        byte[] body = new byte[len];
        in.readFully(body);
        EmbeddedChannel decode = new EmbeddedChannel(new FrameDecoder());
        decode.writeInbound(Unpooled.buffer().writeInt(len).writeBytes(body));
        return decode.readInbound();
    }

    /** Registers at {@code clusterVersion} and answers {@code calls} load calls of the master, each with a start-over. */
    private void registerAndReportEachTime(int clusterVersion, int calls) throws Exception {
        try (Socket s = new Socket("127.0.0.1", master.server.port())) {
            s.setSoTimeout(10_000);
            write(s, new Register(clusterVersion, "w1", token, "test", 2, 1L << 30, 1L << 40));
            assertThat(read(s)).isInstanceOf(Registered.class);
            RemoteDedupWorker w = await().atMost(Duration.ofSeconds(5)).until(() -> master.server.dedupLinks().upByWorkerId().get(1L),
                    x -> x != null);
            for (int i = 0; i < calls; i++) {
                CompletableFuture<?> asked = CompletableFuture.runAsync(w::load);
                DedupControl c = (DedupControl) read(s);
                write(s, new DedupDone(c.requestId(), new long[DedupFrames.LOAD_FIELDS], System.currentTimeMillis(),
                        DedupDone.STARTED_OVER_EPOCH_GAP));
                asked.get();
            }
        }
    }

    @Test
    void reportOnEveryAnswer_atVersion2_auditedOnce() throws Exception {
        registerAndReportEachTime(2, 20);
        assertThat(master.server.dedupLinks().startedOver(1)).isNotNull();
        assertThat(audit).filteredOn(e -> e.action().equals(AUDITED)).hasSize(1);
    }

    @Test
    void report_fromAWorkerRegisteredAtVersion1_ignored() throws Exception {
        registerAndReportEachTime(1, 3);
        assertThat(master.server.dedupLinks().startedOver(1)).isNull();
        assertThat(audit).filteredOn(e -> e.action().equals(AUDITED)).isEmpty();
    }
}
