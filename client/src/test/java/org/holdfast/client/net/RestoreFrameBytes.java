package org.holdfast.client.net;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.Socket;
import java.util.Arrays;
import org.holdfast.common.protocol.FrameEncoder;
import org.holdfast.common.protocol.Hello;
import org.holdfast.common.protocol.Message;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.common.protocol.RestoreData;

/** Wire bytes of restore frames for the socket tests, and the byte-for-byte check of what arrived. */
final class RestoreFrameBytes {
    private RestoreFrameBytes() {
    }

    /** {@code d} as the server sends it; releases {@code d}. */
    static byte[] wire(RestoreData d) {
        ByteBuf wire = Unpooled.buffer();
        FrameEncoder.write(d, wire);
        d.release();
        return ByteBufUtil.getBytes(wire);
    }

    /** Fails unless {@code m}, encoded again, is exactly {@code expected} (frame {@code i}). */
    static void check(Message m, byte[] expected, int i) {
        ByteBuf again = Unpooled.buffer(expected.length);
        FrameEncoder.write(m, again);
        byte[] got = ByteBufUtil.getBytes(again);
        int at = Arrays.mismatch(got, expected);
        assertThat(at).as("frame %d byte for byte: first difference at byte %d of %d (%d received)", i, at, expected.length, got.length)
                .isEqualTo(-1);
    }

    /**
     * The agent's first frame, once connected: a connection drops frames that arrive before
     * {@link ServerConnection#connect} has returned (a real server never sends first), so the test
     * server waits for it ({@link #awaitAgent}) before sending.
     */
    static void speakFirst(ServerConnection conn) {
        conn.send(new Hello(ProtocolLimits.PROTOCOL_VERSION, "slab-test", ""));
    }

    /** Reads the agent's first frame from {@code s}, all of it (unread bytes would make closing the socket a reset). */
    static void awaitAgent(Socket s) throws IOException {
        DataInputStream in = new DataInputStream(s.getInputStream());
        in.skipNBytes(in.readInt());
    }
}
