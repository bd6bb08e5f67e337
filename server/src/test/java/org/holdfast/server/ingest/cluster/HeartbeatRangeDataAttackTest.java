package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.holdfast.server.ingest.RefusedWriter.frame;
import static org.holdfast.server.ingest.cluster.ClusterFrames.read;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.common.protocol.Heartbeat;
import org.holdfast.common.protocol.HeartbeatAck;
import org.holdfast.common.protocol.Message;
import org.holdfast.common.protocol.MessageType;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.common.protocol.Register;
import org.holdfast.common.protocol.Registered;
import org.holdfast.server.cluster.MembershipSettings;
import org.holdfast.server.security.AuditLog;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Forged range-data reports in HEARTBEAT (cluster version 3) from an authenticated worker over a real
 * socket: an unknown state, a negative (u64 over 2^63) figure, a partial report or extra bytes is
 * refused with ERROR and the link closes, the report the master shows stays as it was, and another
 * worker keeps being served; a worker cannot report for another worker's range, and a next PBN past
 * its own range never shows as more PBNs used than its range holds.
 */
class HeartbeatRangeDataAttackTest {
    private static final int HEARTBEAT_BODY = 8 + 4 + 8 + 8 + 8;

    @TempDir
    Path dir;
    private TestMaster master;
    private String token;

    @BeforeEach
    void start() {
        master = new TestMaster(dir.resolve("catalog"), new MembershipSettings(Duration.ofMillis(200), Duration.ofSeconds(2),
                Duration.ofSeconds(3), MembershipSettings.DEFAULT_FIRST_PBN, MembershipSettings.DEFAULT_RANGE_SIZE), AuditLog.NONE);
        token = master.workerToken();
    }

    @AfterEach
    void stop() {
        master.close();
    }

    /** A HEARTBEAT frame whose body is a valid 36-byte heartbeat followed by {@code tail} as it is. */
    private static byte[] heartbeatWithTail(long sequence, byte[] tail) {
        ByteBuf b = Unpooled.buffer();
        b.writeInt(ProtocolLimits.HEADER_BYTES + HEARTBEAT_BODY + tail.length).writeByte(ProtocolLimits.VERSION)
                .writeByte(MessageType.HEARTBEAT.code());
        b.writeLong(sequence).writeInt(0).writeLong(1).writeLong(2).writeLong(3).writeBytes(tail);
        byte[] out = new byte[b.readableBytes()];
        b.readBytes(out);
        return out;
    }

    private static byte[] report17(int state, long nextPbn, long logBytes) {
        ByteBuf b = Unpooled.buffer(17);
        b.writeByte(state).writeLong(nextPbn).writeLong(logBytes);
        byte[] out = new byte[17];
        b.readBytes(out);
        return out;
    }

    /** A registered worker {@code node} (cluster version {@code version}) whose first heartbeat reported {@code first}. */
    private Socket registered(String node, int version, Heartbeat.RangeData first) throws IOException {
        Socket s = new Socket("127.0.0.1", master.server.port());
        s.setSoTimeout(10_000);
        s.getOutputStream().write(frame(new Register(version, node, token, "test", 2, 1L << 30, 1L << 40)));
        assertThat(read(s.getInputStream(), 1)).singleElement().isInstanceOf(Registered.class);
        s.getOutputStream().write(frame(new Heartbeat(1, 0, 1, 2, 3, first)));
        assertThat(read(s.getInputStream(), 1)).singleElement().isEqualTo(new HeartbeatAck(1));
        return s;
    }

    private RangeDataReport report(long workerId) {
        return master.server.rangeStores().up(workerId).report();
    }

    /** Sends {@code bytes} on {@code s} and expects one ERROR of {@code code}, then the close. */
    private static void assertRefused(Socket s, byte[] bytes, ErrorCode code) throws IOException {
        s.getOutputStream().write(bytes);
        s.getOutputStream().flush();
        assertThat(read(s.getInputStream(), Integer.MAX_VALUE)).singleElement().isInstanceOfSatisfying(ErrorMessage.class,
                e -> assertThat(e.code()).isEqualTo(code));
    }

    /**
     * Worker w1 (id 1, the first range) sends a heartbeat ending with {@code tail}; w2 (id 2, the next
     * range) is registered beside it.
     */
    private void assertForgedReportRefused(byte[] tail, ErrorCode code) throws IOException {
        long first = MembershipSettings.DEFAULT_FIRST_PBN;
        long size = MembershipSettings.DEFAULT_RANGE_SIZE;
        try (Socket s = registered("w1", Register.CLUSTER_VERSION, new Heartbeat.RangeData(Heartbeat.RangeData.SERVING, first + 10, 4096));
                Socket other = registered("w2", Register.CLUSTER_VERSION, new Heartbeat.RangeData(Heartbeat.RangeData.SERVING,
                        first + size + 5, 77))) {
            RemoteRangeStore attacker = master.server.rangeStores().up(1);
            RangeDataReport before = attacker.report();
            RangeDataReport otherBefore = report(2);
            assertThat(before.pbnsUsed()).isEqualTo(10);
            assertThat(otherBefore.pbnsUsed()).isEqualTo(5);
            assertRefused(s, heartbeatWithTail(2, tail), code);
            assertThat(attacker.report()).as("the refused report changed nothing").isEqualTo(before);
            assertThat(report(2)).as("the other worker's report is its own").isEqualTo(otherBefore);
            // the other worker is still served
            other.getOutputStream().write(frame(new Heartbeat(2, 0, 1, 2, 3, new Heartbeat.RangeData(Heartbeat.RangeData.SERVING,
                    first + size + 6, 78))));
            assertThat(read(other.getInputStream(), 1)).singleElement().isEqualTo(new HeartbeatAck(2));
            assertThat(report(2).pbnsUsed()).isEqualTo(6);
            assertThat(report(2).logBytes()).isEqualTo(78);
        }
    }

    @Test
    void heartbeat_unknownRangeState_isRefusedBadFrame_reportUnchanged_otherWorkerServed() throws IOException {
        assertForgedReportRefused(report17(3, 0, 0), ErrorCode.BAD_FRAME);
    }

    @Test
    void heartbeat_nextPbnOver2To63_isRefusedBadFrame_reportUnchanged() throws IOException {
        assertForgedReportRefused(report17(Heartbeat.RangeData.SERVING, -1L, 0), ErrorCode.BAD_FRAME);
    }

    @Test
    void heartbeat_logBytesOver2To63_isRefusedBadFrame_reportUnchanged() throws IOException {
        assertForgedReportRefused(report17(Heartbeat.RangeData.SERVING, MembershipSettings.DEFAULT_FIRST_PBN, Long.MIN_VALUE),
                ErrorCode.BAD_FRAME);
    }

    @Test
    void heartbeat_refusedStateWithFigures_isRefusedBadFrame() throws IOException {
        assertForgedReportRefused(report17(Heartbeat.RangeData.REFUSED, MembershipSettings.DEFAULT_FIRST_PBN + 1, 1),
                ErrorCode.BAD_FRAME);
    }

    @Test
    void heartbeat_partialReport_isRefusedBadFrame() throws IOException {
        byte[] partial = java.util.Arrays.copyOf(report17(Heartbeat.RangeData.SERVING, 5, 5), 9);
        assertForgedReportRefused(partial, ErrorCode.BAD_FRAME);
    }

    @Test
    void heartbeat_reportWithExtraBytes_isRefused() throws IOException {
        byte[] longer = java.util.Arrays.copyOf(report17(Heartbeat.RangeData.SERVING, 5, 5), 17 + 4);
        try (Socket s = registered("w1", Register.CLUSTER_VERSION, null)) {
            s.getOutputStream().write(heartbeatWithTail(2, longer));
            s.getOutputStream().flush();
            assertThat(read(s.getInputStream(), Integer.MAX_VALUE)).singleElement().isInstanceOfSatisfying(ErrorMessage.class,
                    e -> assertThat(e.code()).isIn(ErrorCode.BAD_FRAME, ErrorCode.LIMIT_EXCEEDED));
        }
        assertThat(master.server.rangeStores().up(1)).as("the worker's link ended").isNull();
    }

    @Test
    void heartbeat_withReport_beforeRegister_isRefusedBadState_nothingRegistered() throws IOException {
        try (Socket s = new Socket("127.0.0.1", master.server.port())) {
            s.setSoTimeout(10_000);
            assertRefused(s, frame(new Heartbeat(1, 0, 1, 2, 3, new Heartbeat.RangeData(Heartbeat.RangeData.SERVING, 1L << 40, 1))),
                    ErrorCode.BAD_STATE);
        }
        assertThat(master.registry.workers()).isEmpty();
        assertThat(master.store.workers()).isEmpty();
    }

    @Test
    void heartbeat_nextPbnInAnotherWorkersRange_showsAtMostItsOwnRangeUsed_otherWorkerUntouched() throws IOException {
        long first = MembershipSettings.DEFAULT_FIRST_PBN;
        long size = MembershipSettings.DEFAULT_RANGE_SIZE;
        try (Socket w1 = registered("w1", Register.CLUSTER_VERSION, new Heartbeat.RangeData(Heartbeat.RangeData.SERVING, first + 3, 9));
                Socket w2 = registered("w2", Register.CLUSTER_VERSION, new Heartbeat.RangeData(Heartbeat.RangeData.SERVING, first + size + 4,
                        9))) {
            PbnRangeCheck.assertRanges(master.server.rangeStores().up(1).range(), master.server.rangeStores().up(2).range());
            // w1 claims w2's next PBN (and far past it)
            w1.getOutputStream().write(frame(new Heartbeat(2, 0, 1, 2, 3, new Heartbeat.RangeData(Heartbeat.RangeData.SERVING,
                    first + size + 1000, 1))));
            assertThat(read(w1.getInputStream(), 1)).singleElement().isEqualTo(new HeartbeatAck(2));
            assertThat(report(1).pbnsUsed()).as("clamped to w1's own range").isEqualTo(size);
            assertThat(report(2).pbnsUsed()).as("w2's report is w2's").isEqualTo(4);
            // a next PBN below its range shows 0 used, never a negative count
            w1.getOutputStream().write(frame(new Heartbeat(3, 0, 1, 2, 3, new Heartbeat.RangeData(Heartbeat.RangeData.SERVING, 1, 1))));
            assertThat(read(w1.getInputStream(), 1)).singleElement().isEqualTo(new HeartbeatAck(3));
            assertThat(report(1).pbnsUsed()).isZero();
        }
    }

    @Test
    void heartbeat_reportOnAVersion2Link_isIgnored() throws IOException {
        try (Socket s = registered("w1", 2, new Heartbeat.RangeData(Heartbeat.RangeData.SERVING, MembershipSettings.DEFAULT_FIRST_PBN + 3, 9))) {
            assertThat(report(1)).as("a version 2 link reports no range data").isNull();
        }
    }

    /** The two workers' ranges do not overlap (else the test proves nothing). */
    private static final class PbnRangeCheck {
        static void assertRanges(org.holdfast.common.id.PbnRange a, org.holdfast.common.id.PbnRange b) {
            assertThat(a.limit()).isLessThanOrEqualTo(b.first());
        }
    }
}
