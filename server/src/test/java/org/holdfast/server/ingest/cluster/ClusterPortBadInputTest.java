package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.holdfast.server.ingest.RefusedWriter.frame;
import static org.holdfast.server.ingest.cluster.ClusterFrames.read;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.holdfast.common.protocol.DedupAnswer;
import org.holdfast.common.protocol.DedupCandidates;
import org.holdfast.common.protocol.DedupLookup;
import org.holdfast.common.protocol.DedupProbe;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.common.protocol.Heartbeat;
import org.holdfast.common.protocol.HeartbeatAck;
import org.holdfast.common.protocol.Hello;
import org.holdfast.common.protocol.Message;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.common.protocol.Register;
import org.holdfast.common.protocol.Registered;
import org.holdfast.server.catalog.ClusterStore;
import org.holdfast.server.cluster.MemberState;
import org.holdfast.server.cluster.MembershipSettings;
import org.holdfast.server.cluster.WorkerRegistry;
import org.holdfast.server.security.ApiTokens;
import org.holdfast.server.security.AuditEvent;
import org.holdfast.server.security.Role;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cluster port against bad input over a real socket, with real tokens and the real catalog:
 * every malformed frame, oversized field and wrong token is answered with ERROR, the connection is
 * closed, and nothing is registered (neither in the registry nor in the catalog).
 */
class ClusterPortBadInputTest {
    @TempDir
    Path dir;
    private TestMaster master;
    private ApiTokens tokens;
    private ClusterStore store;
    private WorkerRegistry registry;
    private ClusterServer server;
    private String workerToken;
    private final List<AuditEvent> audit = new java.util.concurrent.CopyOnWriteArrayList<>();

    @BeforeEach
    void start() {
        master = new TestMaster(dir.resolve("catalog"), new MembershipSettings(Duration.ofMillis(200), Duration.ofMillis(600),
                Duration.ofSeconds(3), MembershipSettings.DEFAULT_FIRST_PBN, MembershipSettings.DEFAULT_RANGE_SIZE), audit::add);
        tokens = master.tokens;
        store = master.store;
        registry = master.registry;
        server = master.server;
        workerToken = issue(Role.WORKER);
    }

    @AfterEach
    void stop() {
        master.close();
    }

    private String issue(Role role) {
        return tokens.issue(new ApiTokens.TokenRequest("t-" + role.wireName() + System.nanoTime(), role, null, null, null), "test", "test")
                .token();
    }

    private static Register register(String node, String token) {
        return new Register(Register.CLUSTER_VERSION, node, token, "test", 2, 1L << 30, 1L << 40);
    }

    /** Header of a frame of {@code type} whose length field claims {@code bodyBytes} of body. */
    private static ByteBuf header(int type, long bodyBytes) {
        ByteBuf b = Unpooled.buffer();
        b.writeInt((int) (bodyBytes + ProtocolLimits.HEADER_BYTES)).writeByte(ProtocolLimits.VERSION).writeByte(type);
        return b;
    }

    private static byte[] bytes(ByteBuf b) {
        byte[] out = new byte[b.readableBytes()];
        b.readBytes(out);
        return out;
    }

    /** Sends {@code bytes} and returns every frame the master answers until it closes the connection. */
    private List<Message> exchange(byte[] bytes) throws IOException {
        try (Socket s = new Socket()) {
            s.connect(new InetSocketAddress("127.0.0.1", server.port()), 5000);
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            out.write(bytes);
            out.flush();
            return readUntilClosed(s.getInputStream());
        }
    }

    private static List<Message> readUntilClosed(InputStream in) throws IOException {
        return read(in, Integer.MAX_VALUE);
    }

    private void assertRefused(byte[] input, ErrorCode code, String messagePart) throws IOException {
        List<Message> answer = exchange(input);
        assertThat(answer).as("the master answers one ERROR, then closes").singleElement().isInstanceOfSatisfying(ErrorMessage.class, e -> {
            assertThat(e.code()).isEqualTo(code);
            assertThat(e.message()).contains(messagePart);
        });
        assertThat(registry.workers()).as("nothing registered").isEmpty();
        assertThat(store.workers()).as("nothing stored").isEmpty();
    }

    @Test
    void register_frameLengthOverTheLimit_isRefusedLimitExceeded() throws IOException {
        ByteBuf b = Unpooled.buffer().writeInt(ProtocolLimits.MAX_FRAME + 1).writeByte(ProtocolLimits.VERSION).writeByte(0x40);
        assertRefused(bytes(b), ErrorCode.LIMIT_EXCEEDED, "over the limit");
    }

    @Test
    void register_bodyLongerThanARegisterCanBe_isRefusedBeforeItIsBuffered() throws IOException {
        assertRefused(bytes(header(0x40, 2000)), ErrorCode.LIMIT_EXCEEDED, "REGISTER body of 2000 bytes is over its limit");
    }

    @Test
    void blocksFrame_beforeRegister_isRefusedByTheBeforeRegisterLimit() throws IOException {
        assertRefused(bytes(header(0x14, 100_000)), ErrorCode.LIMIT_EXCEEDED, "before the HELLO was accepted");
    }

    @Test
    void register_nodeNameLengthOverItsLimit_isRefusedLimitExceeded() throws IOException {
        ByteBuf body = Unpooled.buffer().writeShort(1).writeShort(65).writeBytes("x".repeat(65).getBytes(StandardCharsets.UTF_8));
        ByteBuf b = header(0x40, body.readableBytes()).writeBytes(body);
        assertRefused(bytes(b), ErrorCode.LIMIT_EXCEEDED, "nodeName of 65 bytes is over its limit 64");
    }

    @Test
    void register_truncatedBody_isRefusedBadFrame() throws IOException {
        byte[] good = frame(register("w1", workerToken));
        ByteBuf b = Unpooled.buffer().writeInt(good.length - 4 - 8).writeBytes(good, 4, good.length - 4 - 8); // last u64 cut off
        assertRefused(bytes(b), ErrorCode.BAD_FRAME, "truncated body");
    }

    @Test
    void register_trailingBytes_isRefusedBadFrame() throws IOException {
        byte[] good = frame(register("w1", workerToken));
        ByteBuf b = Unpooled.buffer().writeInt(good.length - 4 + 3).writeBytes(good, 4, good.length - 4).writeBytes(new byte[3]);
        assertRefused(bytes(b), ErrorCode.BAD_FRAME, "trailing bytes");
    }

    @Test
    void unknownMessageType_isRefusedBadFrame() throws IOException {
        assertRefused(bytes(header(0x7f, 0)), ErrorCode.BAD_FRAME, "unknown message type 0x7f");
    }

    @Test
    void wrongFrameVersion_isRefusedUnsupportedVersion() throws IOException {
        ByteBuf b = Unpooled.buffer().writeInt(2).writeByte(9).writeByte(0x40);
        assertRefused(bytes(b), ErrorCode.UNSUPPORTED_VERSION, "frame version 9");
    }

    @Test
    void agentHello_onTheClusterPort_isRefusedNamingTheAgentPort() throws IOException {
        assertRefused(frame(Hello.of("agent", workerToken)), ErrorCode.BAD_STATE, "agents connect to the agent port");
    }

    @Test
    void heartbeat_beforeRegister_isRefusedBadState() throws IOException {
        assertRefused(frame(new Heartbeat(0, 0, 0, 0, 0)), ErrorCode.BAD_STATE, "must be REGISTER");
    }

    @Test
    void dedupFrames_beforeRegister_areRefusedBadState() throws IOException {
        // an outsider answering a dedup call nobody made, or asking the master to look something up
        assertRefused(frame(new DedupAnswer(1, 1, new long[] {42}, new int[] {1}, new long[7])), ErrorCode.BAD_STATE,
                "must be REGISTER");
        assertRefused(frame(new DedupLookup(1, 1, 1, new byte[32])), ErrorCode.BAD_STATE, "must be REGISTER");
    }

    @Test
    void dedupProbeFrames_beforeRegister_areRefusedBadState() throws IOException {
        assertRefused(frame(new DedupCandidates(1, 3, new long[7])), ErrorCode.BAD_STATE, "must be REGISTER");
        assertRefused(frame(new DedupProbe(1, 1, 0, 1, 1, new long[1])), ErrorCode.BAD_STATE, "must be REGISTER");
    }

    @Test
    void dataFrames_beforeRegister_areRefusedBadState() throws IOException {
        // an outsider answering a data call nobody made, or asking the master to store or read blocks
        assertRefused(frame(new org.holdfast.common.protocol.DataStored(1, 5, 1)), ErrorCode.BAD_STATE, "must be REGISTER");
        assertRefused(frame(new org.holdfast.common.protocol.DataRead(1, 1, new long[] {5})), ErrorCode.BAD_STATE, "must be REGISTER");
        assertRefused(frame(new org.holdfast.common.protocol.DataSync(1)), ErrorCode.BAD_STATE, "must be REGISTER");
    }

    @Test
    void dataAnswer_afterRegisterToARequestNeverSent_isRefusedBadState() throws IOException {
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(frame(register("w1", workerToken)));
            assertThat(read(s.getInputStream(), 1)).singleElement().isInstanceOf(Registered.class);
            s.getOutputStream().write(frame(new org.holdfast.common.protocol.DataSynced(42, 5)));
            assertThat(readUntilClosed(s.getInputStream())).singleElement().isInstanceOfSatisfying(ErrorMessage.class, e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.BAD_STATE);
                assertThat(e.message()).contains("DATA_SYNCED answers request 42, which is not pending on this link");
            });
        }
    }

    @Test
    void gcDeltaFrames_beforeRegister_areRefusedBadState() throws IOException {
        // an outsider acknowledging GC deltas nobody sent, or asking the master to log some
        assertRefused(frame(new org.holdfast.common.protocol.GcDeltaApplied(1, 0)), ErrorCode.BAD_STATE, "must be REGISTER");
        assertRefused(frame(new org.holdfast.common.protocol.GcDelta(1, 0, 1, new byte[] {1}, new long[] {5}, new long[] {1})),
                ErrorCode.BAD_STATE, "must be REGISTER");
    }

    @Test
    void gcSweepFrames_beforeRegister_areRefusedBadState() throws IOException {
        // an outsider asking the master to sweep, or answering a sweep nobody asked for
        assertRefused(frame(new org.holdfast.common.protocol.GcSweep(1, 0, 0)), ErrorCode.BAD_STATE, "must be REGISTER");
        assertRefused(frame(org.holdfast.common.protocol.GcSweepFailed.of(1, 1, "busy")), ErrorCode.BAD_STATE, "must be REGISTER");
    }

    @Test
    void countsCheckAndTakeoverRecordsFrames_beforeRegister_areRefusedBadState() throws IOException {
        // an outsider with no token answering a counts check nobody asked for, or asking for a worker's sealed-log records
        assertRefused(frame(org.holdfast.common.protocol.CountsChecked.refused(1, "no")), ErrorCode.BAD_STATE, "must be REGISTER");
        assertRefused(frame(new org.holdfast.common.protocol.CountsCheck(1, 1, 2, 0, new long[0], new int[0], new int[0], new long[0])),
                ErrorCode.BAD_STATE, "must be REGISTER");
        assertRefused(frame(new org.holdfast.common.protocol.TakeoverRecords(1, 0)), ErrorCode.BAD_STATE, "must be REGISTER");
    }

    @Test
    void staleMarksAndSealedLogsFrames_beforeRegister_areRefusedBadState() throws IOException {
        // an outsider with no token forging freed blocks for the other workers' engines, or sealed-log records of a worker
        assertRefused(frame(new org.holdfast.common.protocol.StaleMarks(1, 1, new long[] {1L << 48}, new byte[32])),
                ErrorCode.BAD_STATE, "must be REGISTER");
        assertRefused(frame(org.holdfast.common.protocol.StaleMarksTaken.of(1, org.holdfast.common.protocol.StaleMarksTaken.TAKEN, "")),
                ErrorCode.BAD_STATE, "must be REGISTER");
        assertRefused(frame(new org.holdfast.common.protocol.SealedLogsPush(1,
                new org.holdfast.common.protocol.SealedLogReport(true, java.util.List.of(), java.util.List.of(), 0))),
                ErrorCode.BAD_STATE, "must be REGISTER");
        assertRefused(frame(new org.holdfast.common.protocol.SealedLogsRecorded(1)), ErrorCode.BAD_STATE, "must be REGISTER");
    }

    @Test
    void countsChecked_afterRegisterForACheckNeverAsked_isRefusedBadState() throws IOException {
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(frame(register("w1", workerToken)));
            assertThat(read(s.getInputStream(), 1)).singleElement().isInstanceOf(Registered.class);
            s.getOutputStream().write(frame(org.holdfast.common.protocol.CountsChecked.refused(42, "forged")));
            assertThat(readUntilClosed(s.getInputStream())).singleElement().isInstanceOfSatisfying(ErrorMessage.class, e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.BAD_STATE);
                assertThat(e.message()).contains("COUNTS_CHECKED answers request 42, which is not pending on this link");
            });
        }
    }

    @Test
    void gcSwept_afterRegisterForASweepNeverAsked_isRefusedBadState() throws IOException {
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(frame(register("w1", workerToken)));
            assertThat(read(s.getInputStream(), 1)).singleElement().isInstanceOf(Registered.class);
            s.getOutputStream().write(frame(new org.holdfast.common.protocol.GcSwept(42, 0, 1, 0, 0, 0, 0, 0, 0, 0, -1, 0)));
            assertThat(readUntilClosed(s.getInputStream())).singleElement().isInstanceOfSatisfying(ErrorMessage.class, e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.BAD_STATE);
                assertThat(e.message()).contains("GC_SWEPT answers request 42, which is not pending on this link");
            });
        }
    }

    @Test
    void gcDeltaFailed_afterRegisterForAPartNeverSent_isRefusedBadState() throws IOException {
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(frame(register("w1", workerToken)));
            assertThat(read(s.getInputStream(), 1)).singleElement().isInstanceOf(Registered.class);
            s.getOutputStream().write(frame(org.holdfast.common.protocol.GcDeltaFailed.of(42, 0, "no")));
            assertThat(readUntilClosed(s.getInputStream())).singleElement().isInstanceOfSatisfying(ErrorMessage.class, e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.BAD_STATE);
                assertThat(e.message()).contains("GC_DELTA_FAILED answers part 0 of operation 42, which is not pending on this link");
            });
        }
    }

    @Test
    void gcGuardFrames_beforeRegister_areRefusedBadState() throws IOException {
        // an outsider asking the master to protect blocks, or answering protections nobody asked for
        assertRefused(frame(new org.holdfast.common.protocol.GcProtect(1, 2, true, 1, new long[] {5})), ErrorCode.BAD_STATE,
                "must be REGISTER");
        assertRefused(frame(new org.holdfast.common.protocol.GcProtected(1, new int[] {0})), ErrorCode.BAD_STATE, "must be REGISTER");
        assertRefused(frame(new org.holdfast.common.protocol.GcSessionEnd(2)), ErrorCode.BAD_STATE, "must be REGISTER");
    }

    @Test
    void gcGuardAnswers_afterRegisterToARequestNeverSent_areRefusedBadState() throws IOException {
        for (Message answer : List.<Message>of(new org.holdfast.common.protocol.GcProtected(42, new int[0]),
                org.holdfast.common.protocol.GcGuardFailed.of(42, "no"))) {
            try (Socket s = new Socket("127.0.0.1", server.port())) {
                s.setSoTimeout(10_000);
                s.getOutputStream().write(frame(register("w1", workerToken)));
                assertThat(read(s.getInputStream(), 1)).singleElement().isInstanceOf(Registered.class);
                s.getOutputStream().write(frame(answer));
                assertThat(readUntilClosed(s.getInputStream())).singleElement().isInstanceOfSatisfying(ErrorMessage.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.BAD_STATE);
                    assertThat(e.message()).contains(answer.type() + " answers request 42, which is not pending on this link");
                });
            }
        }
    }

    @Test
    void gcProtect_fromAWorker_isRefusedBadState() throws IOException {
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(frame(register("w1", workerToken)));
            assertThat(read(s.getInputStream(), 1)).singleElement().isInstanceOf(Registered.class);
            s.getOutputStream().write(frame(new org.holdfast.common.protocol.GcProtect(1, 2, false, 1, new long[] {5})));
            assertThat(readUntilClosed(s.getInputStream())).singleElement().isInstanceOfSatisfying(ErrorMessage.class, e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.BAD_STATE);
                assertThat(e.message()).contains("GC_PROTECT is not sent to a master's cluster port");
            });
        }
    }

    @Test
    void register_malformedToken_isRefusedUnauthorized() throws IOException {
        assertRefused(frame(register("w1", "not-a-token")), ErrorCode.UNAUTHORIZED, "malformed");
    }

    @Test
    void register_noToken_isRefusedUnauthorized() throws IOException {
        assertRefused(frame(register("w1", "")), ErrorCode.UNAUTHORIZED, "no token");
    }

    @Test
    void register_foreignToken_isRefusedUnauthorized() throws IOException {
        // well-formed, but issued by another master (its catalog): unknown here
        String foreign = "hft_0123456789abcdef_" + "A".repeat(43);
        assertRefused(frame(register("w1", foreign)), ErrorCode.UNAUTHORIZED, "no such token here");
    }

    @Test
    void register_revokedWorkerToken_isRefusedUnauthorized() throws IOException {
        String t = issue(Role.WORKER);
        tokens.revoke(ApiTokens.idOf(t).orElseThrow(), "test", "test");
        assertRefused(frame(register("w1", t)), ErrorCode.UNAUTHORIZED, "revoked");
    }

    @Test
    void register_agentOrAdminToken_isRefusedUnauthorizedAndAudited() throws IOException {
        assertRefused(frame(register("w1", issue(Role.AGENT))), ErrorCode.UNAUTHORIZED, "role agent");
        assertRefused(frame(register("w1", issue(Role.ADMIN))), ErrorCode.UNAUTHORIZED, "role admin");
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> audit.size() == 2);
        assertThat(audit).allSatisfy(e -> {
            assertThat(e.action()).isEqualTo("cluster.register");
            assertThat(e.result()).isEqualTo("denied");
            assertThat(e.target()).isEqualTo("node:w1");
            assertThat(e.source()).startsWith("127.0.0.1:");
        });
        assertThat(audit.get(0).detail()).contains("role agent");
        assertThat(audit.get(0).principal()).startsWith("token:");
    }

    @Test
    void register_otherClusterVersion_isRefusedUnsupportedVersion() throws IOException {
        Register r = new Register(Register.CLUSTER_VERSION + 1, "w1", workerToken, "test", 2, 1, 1);
        assertRefused(frame(r), ErrorCode.UNSUPPORTED_VERSION, "cluster protocol versions 1 to " + Register.CLUSTER_VERSION);
    }

    @Test
    void register_newerClusterVersion_refusalSaysTheWorkerStepsDownByItself() throws IOException {
        Register r = new Register(Register.CLUSTER_VERSION + 1, "w1", workerToken, "test", 2, 1, 1);
        // mixed versions are supported during an upgrade: the words must not ask for equal versions
        assertRefused(frame(r), ErrorCode.UNSUPPORTED_VERSION, "registers again with an older version by itself and works");
    }

    @Test
    void register_nodeNameWithASlash_isRefusedBadFrame() throws IOException {
        assertRefused(frame(register("a/b", workerToken)), ErrorCode.BAD_FRAME, "node name 'a/b'");
    }

    @Test
    void register_nodeNameWithALineBreakAndNoToken_isRefusedBeforeTheNameReachesTheLogOrAudit() throws IOException {
        // an outsider without a token must not write lines of its choosing into the master's log and audit
        assertRefused(frame(register("w1\nSEVERE: forged", "")), ErrorCode.BAD_FRAME, "node name");
        assertThat(audit).isEmpty();
    }

    @Test
    void connect_overTheConnectionMaximum_isClosedAtOnceAndTheOthersStayOpen() throws IOException {
        List<Socket> open = new ArrayList<>();
        try {
            for (int i = 0; i < ClusterServer.MAX_CONNECTIONS; i++) { // from 127.0.0.1, .2, ...: under the per-address maximum
                open.add(connectFrom("127.0.0." + (1 + i / ClusterServer.MAX_PER_SOURCE)));
            }
            try (Socket extra = connectFrom("127.0.0.250")) {
                extra.setSoTimeout(10_000);
                assertThat(extra.getInputStream().read()).as("the connection over the maximum is closed").isEqualTo(-1);
            }
            Socket first = open.get(0);
            first.setSoTimeout(300);
            assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> first.getInputStream().read()))
                    .as("the earlier connections stay open").isInstanceOf(java.net.SocketTimeoutException.class);
        } finally {
            for (Socket s : open) {
                s.close();
            }
        }
        assertThat(registry.workers()).isEmpty();
    }

    @Test
    void register_dribbledOneByteAtATime_isDroppedWithinLostAfter() throws IOException {
        // an outsider without a token keeps a slot (of 256) by never finishing REGISTER: one byte now and then resets the idle timer
        byte[] reg = frame(register("w1", workerToken));
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            java.io.PushbackInputStream in = new java.io.PushbackInputStream(s.getInputStream());
            s.setSoTimeout(1000);
            boolean answered = false;
            for (int i = 0; i < 8 && !answered; i++) { // 8 s, lost-after is 3 s
                try {
                    s.getOutputStream().write(reg[i]);
                    s.getOutputStream().flush();
                } catch (IOException closed) {
                    answered = true;
                    break;
                }
                try {
                    int b = in.read();
                    if (b >= 0) {
                        in.unread(b);
                    }
                    answered = true;
                } catch (java.net.SocketTimeoutException stillOpen) {
                    // the master still waits for the rest
                }
            }
            assertThat(answered).as("the master drops a connection that has not sent REGISTER within lost-after").isTrue();
            s.setSoTimeout(10_000);
            assertThat(readUntilClosed(in)).singleElement().isInstanceOfSatisfying(ErrorMessage.class, e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.BAD_STATE);
                assertThat(e.message()).contains("no REGISTER");
            });
        }
        assertThat(registry.workers()).isEmpty();
    }

    @Test
    void heartbeats_flood_isRefusedLimitExceededAndTheWorkerIsLost() throws IOException {
        // every heartbeat queues a token check on the one lane all workers share: a flood must not queue without bound
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(frame(register("w1", workerToken)));
            assertThat(read(s.getInputStream(), 1)).singleElement().isInstanceOf(Registered.class);
            java.io.ByteArrayOutputStream flood = new java.io.ByteArrayOutputStream();
            int sent = 2000;
            for (int i = 0; i < sent; i++) {
                flood.writeBytes(frame(new Heartbeat(i, 0, 0, 0, 0)));
            }
            s.getOutputStream().write(flood.toByteArray());
            s.getOutputStream().flush();
            List<Message> answers = readUntilClosed(s.getInputStream());
            assertThat(answers).as("acknowledged before the refusal").hasSizeLessThan(sent / 10);
            assertThat(answers.get(answers.size() - 1)).isInstanceOfSatisfying(ErrorMessage.class, e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.LIMIT_EXCEEDED);
                assertThat(e.message()).contains("heartbeats");
            });
        }
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5))
                .until(() -> registry.workers().get(0).state() == MemberState.LOST);
    }

    @Test
    void connect_overThePerAddressMaximum_isClosedAndAWorkerFromAnotherAddressStillRegisters() throws IOException {
        // one address (an outsider needs no token to connect) must not hold all 256 slots and lock the workers out
        List<Socket> open = new ArrayList<>();
        try {
            for (int i = 0; i < ClusterServer.MAX_PER_SOURCE; i++) {
                open.add(new Socket("127.0.0.1", server.port()));
            }
            try (Socket extra = new Socket("127.0.0.1", server.port())) {
                extra.setSoTimeout(5_000);
                assertThat(extra.getInputStream().read()).as("the connection over the per-address maximum is closed").isEqualTo(-1);
            }
            try (Socket worker = connectFrom("127.0.0.2")) {
                worker.setSoTimeout(10_000);
                worker.getOutputStream().write(frame(register("w1", workerToken)));
                assertThat(read(worker.getInputStream(), 1)).singleElement().isInstanceOf(Registered.class);
            }
        } finally {
            for (Socket s : open) {
                s.close();
            }
        }
    }

    private Socket connectFrom(String localAddress) throws IOException {
        Socket s = new Socket();
        s.bind(new InetSocketAddress(localAddress, 0));
        s.connect(new InetSocketAddress("127.0.0.1", server.port()), 5000);
        return s;
    }

    @Test
    void register_goodToken_isRegisteredAndHeartbeatsAreAcknowledged() throws IOException {
        try (Socket s = new Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(10_000);
            s.getOutputStream().write(frame(register("w1", workerToken)));
            // pipelined behind REGISTER: held until the token is checked, then handled
            s.getOutputStream().write(frame(new Heartbeat(7, 1500, 1, 2, 3)));
            List<Message> got = read(s.getInputStream(), 2);
            assertThat(got).hasSize(2);
            assertThat(got.get(0)).isInstanceOfSatisfying(Registered.class, r -> {
                assertThat(r.workerId()).isEqualTo(1);
                assertThat(r.epoch()).isEqualTo(1);
                assertThat(r.pbnFirst()).isEqualTo(MembershipSettings.DEFAULT_FIRST_PBN);
                assertThat(r.heartbeatMillis()).isEqualTo(200);
            });
            assertThat(got.get(1)).isEqualTo(new HeartbeatAck(7));
            assertThat(registry.workers()).singleElement().satisfies(w -> {
                assertThat(w.state()).isEqualTo(MemberState.UP);
                assertThat(w.load().loadMilli()).isEqualTo(1500);
            });
            assertThat(store.workers()).hasSize(1);
            assertThat(audit).singleElement().satisfies(e -> {
                assertThat(e.action()).isEqualTo("cluster.register");
                assertThat(e.result()).isEqualTo("ok");
                assertThat(e.target()).isEqualTo("worker:1(w1)");
                assertThat(e.toString()).doesNotContain(workerToken);
            });

            // a second connection claiming the same node while this one lives is refused
            assertThat(exchange(frame(register("w1", workerToken)))).singleElement()
                    .isInstanceOfSatisfying(ErrorMessage.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.NODE_CONFLICT));
            assertThat(registry.workers()).singleElement().satisfies(w -> assertThat(w.epoch()).isEqualTo(1));

            // revoking the token ends the membership at the next heartbeat
            tokens.revoke(ApiTokens.idOf(workerToken).orElseThrow(), "test", "test");
            s.getOutputStream().write(frame(new Heartbeat(8, 0, 0, 0, 0)));
            List<Message> rest = readUntilClosed(s.getInputStream());
            assertThat(rest).singleElement().isInstanceOfSatisfying(ErrorMessage.class, e -> {
                assertThat(e.code()).isEqualTo(ErrorCode.UNAUTHORIZED);
                assertThat(e.message()).contains("revoked");
            });
        }
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5))
                .until(() -> registry.workers().get(0).state() == MemberState.LOST);
    }
}
