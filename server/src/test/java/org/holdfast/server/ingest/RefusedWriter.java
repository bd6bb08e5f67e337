package org.holdfast.server.ingest;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.common.protocol.FrameDecoder;
import org.holdfast.common.protocol.FrameEncoder;
import org.holdfast.common.protocol.Message;
import org.holdfast.common.protocol.ProtocolLimits;

/**
 * A peer refused while it is still writing, over a real socket: it sends the header of a frame
 * whose length is over {@link ProtocolLimits#MAX_FRAME} (refused as soon as its length field
 * arrives) and then megabytes more, far beyond the socket buffers, before it reads. Against a side
 * that closes at once the writes fail with a reset and the ERROR is lost; against one that lingers
 * the writes complete and the ERROR is read. Shared by the agent, cluster and dedup-link tests.
 */
public final class RefusedWriter {
    /** Bytes written after the refused header: several times any loopback socket buffer. */
    public static final int TRAILING_BYTES = 8 << 20;

    private final Socket socket;
    private final OutputStream out;
    private final DataInputStream in;
    private final List<Message> beforeError = new ArrayList<>();
    private long errorAtNanos;

    public RefusedWriter(Socket socket) throws IOException {
        this.socket = socket;
        socket.setSoTimeout(20_000);
        this.out = socket.getOutputStream();
        this.in = new DataInputStream(socket.getInputStream());
    }

    /** The encoded bytes of {@code m}, as a peer sends them. */
    public static byte[] frame(Message m) {
        ByteBuf b = Unpooled.buffer();
        FrameEncoder.write(m, b);
        byte[] bytes = new byte[b.readableBytes()];
        b.readBytes(bytes);
        b.release();
        return bytes;
    }

    /** The header of a frame of {@code type} whose length field claims {@code MAX_FRAME + 1}: 16 MiB and more. */
    public static byte[] oversizedHeader(int type) {
        return java.nio.ByteBuffer.allocate(6).putInt(ProtocolLimits.MAX_FRAME + 1).put((byte) ProtocolLimits.VERSION).put((byte) type)
                .array();
    }

    /** Sends {@code bytes} as they are. */
    public void send(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    /**
     * Writes {@link #oversizedHeader} and {@link #TRAILING_BYTES} more. An IOException here means the
     * refusing side reset the connection while this side was still writing.
     */
    public void writeRefusedFrame(int type) throws IOException {
        out.write(oversizedHeader(type));
        byte[] chunk = new byte[64 << 10];
        for (int sent = 0; sent < TRAILING_BYTES; sent += chunk.length) {
            out.write(chunk);
        }
        out.flush();
    }

    /** The next frame; fails if the other side closed. */
    public Message read() throws IOException {
        Message m = next();
        if (m == null) {
            throw new AssertionError("the connection closed (or was reset) where a frame was expected");
        }
        return m;
    }

    /** Reads frames until an ERROR and returns it; fails at a close (or reset) before it. */
    public ErrorMessage expectError() throws IOException {
        while (true) {
            Message m = next();
            if (m == null) {
                throw new AssertionError("closed (or reset) without an ERROR; frames before: " + beforeError);
            }
            if (m instanceof ErrorMessage e) {
                errorAtNanos = System.nanoTime();
                return e;
            }
            beforeError.add(m);
        }
    }

    /** Frames read before the ERROR (heartbeats, say). */
    public List<Message> beforeError() {
        return beforeError;
    }

    /** After {@link #expectError}: waits for the other side to close and returns how long after the ERROR it did. */
    public Duration closedAfterError() throws IOException {
        if (next() != null) {
            throw new AssertionError("a frame after the ERROR: the ERROR must be the last one");
        }
        return Duration.ofNanos(System.nanoTime() - errorAtNanos);
    }

    /**
     * Writes {@code first} and then zeros for ever on a thread of its own while this thread reads the
     * ERROR; returns how long after the ERROR the writes failed (the other side cut the
     * connection). Fails if they still succeed after {@code atMost}.
     */
    public Duration writeForEverAfter(byte[] first, Duration atMost) throws Exception {
        AtomicLong failedAt = new AtomicLong();
        Thread writer = new Thread(() -> {
            byte[] chunk = new byte[64 << 10];
            long until = System.nanoTime() + atMost.toNanos();
            try {
                out.write(first);
                while (System.nanoTime() < until) {
                    out.write(chunk);
                }
            } catch (IOException cut) {
                failedAt.set(System.nanoTime());
            }
        }, "refused-writer");
        writer.setDaemon(true);
        writer.start();
        expectError();
        writer.join(atMost.toMillis() + 5_000);
        if (failedAt.get() == 0) {
            socket.close();
            throw new AssertionError("the writes still succeeded " + atMost + " after they began: the connection was never cut");
        }
        return Duration.ofNanos(failedAt.get() - errorAtNanos);
    }

    /** The next frame, or null once the other side closed (an EOF, or a reset). */
    private Message next() throws IOException {
        int len;
        byte[] body;
        try {
            len = in.readInt();
            if (len < ProtocolLimits.HEADER_BYTES || len > ProtocolLimits.MAX_FRAME) {
                throw new AssertionError("a frame of length " + len);
            }
            body = new byte[len];
            in.readFully(body);
        } catch (EOFException | SocketException closed) {
            return null;
        }
        EmbeddedChannel decode = new EmbeddedChannel(new FrameDecoder());
        try {
            decode.writeInbound(Unpooled.buffer().writeInt(len).writeBytes(body));
            return decode.readInbound();
        } finally {
            decode.finishAndReleaseAll();
        }
    }
}
