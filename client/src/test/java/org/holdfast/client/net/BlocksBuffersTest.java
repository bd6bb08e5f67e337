package org.holdfast.client.net;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.holdfast.common.protocol.Blocks;
import org.holdfast.common.protocol.FrameEncoder;
import org.holdfast.common.protocol.PayloadCodec;
import org.junit.jupiter.api.Test;

/** BLOCKS frames built in reused buffers reach a real socket byte for byte, and a buffer is reused only once sent. */
class BlocksBuffersTest {

    private static Blocks frame(BlocksBuffers frames, long lbn, int fill) {
        byte[] payload = new byte[4096];
        java.util.Arrays.fill(payload, (byte) fill);
        return frames.builder().add(lbn, PayloadCodec.RAW, payload, 0, 4096).add(lbn + 1, PayloadCodec.ZSTD, payload, 0, 33).build();
    }

    private static byte[] wire(Blocks b) {
        ByteBuf out = Unpooled.buffer();
        FrameEncoder.write(b, out);
        return ByteBufUtil.getBytes(out);
    }

    private static void awaitIdle(BlocksBuffers frames, int n) throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (frames.idleBuffers() != n && System.nanoTime() < until) {
            Thread.sleep(2);
        }
        assertThat(frames.idleBuffers()).isEqualTo(n);
    }

    @Test
    void sentFrames_arriveIntact_andTheSecondReusesTheFirstBuffer() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
             BlocksBuffers frames = new BlocksBuffers(1 << 10, 2)) { // every frame outgrows 1 KiB: grown buffers are kept too
            CompletableFuture<byte[]> received = CompletableFuture.supplyAsync(() -> {
                try (Socket s = server.accept(); InputStream in = s.getInputStream()) {
                    ByteArrayOutputStream all = new ByteArrayOutputStream();
                    in.transferTo(all);
                    return all.toByteArray();
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            ByteArrayOutputStream expected = new ByteArrayOutputStream();
            try (ServerConnection conn = ServerConnection.connect(new ServerAddress("127.0.0.1", server.getLocalPort()), Duration.ofSeconds(5))) {
                Blocks first = frame(frames, 100, 1);
                ByteBuf firstBuffer = first.data();
                expected.write(wire(first));
                CompletableFuture<Throwable> sent = new CompletableFuture<>();
                frames.send(conn, first, sent::complete);
                assertThat(sent.get(5, TimeUnit.SECONDS)).isNull();
                awaitIdle(frames, 1);

                Blocks second = frame(frames, 200, 2);
                assertThat(second.data()).isSameAs(firstBuffer);
                assertThat(frames.idleBuffers()).isZero();
                Blocks third = frame(frames, 300, 3); // the second still holds the idle one: a new buffer
                assertThat(third.data()).isNotSameAs(firstBuffer);
                expected.write(wire(second));
                expected.write(wire(third));
                CompletableFuture<Throwable> sent2 = new CompletableFuture<>();
                CompletableFuture<Throwable> sent3 = new CompletableFuture<>();
                frames.send(conn, second, sent2::complete);
                frames.send(conn, third, sent3::complete);
                assertThat(sent2.get(5, TimeUnit.SECONDS)).isNull();
                assertThat(sent3.get(5, TimeUnit.SECONDS)).isNull();
                awaitIdle(frames, 2);

                byte[] small = new byte[4096];
                Blocks oneOff = frames.oneOff(4096).add(400, PayloadCodec.RAW, small, 0, 4096).build();
                expected.write(wire(oneOff));
                CompletableFuture<Throwable> sent4 = new CompletableFuture<>();
                frames.send(conn, oneOff, sent4::complete);
                assertThat(sent4.get(5, TimeUnit.SECONDS)).isNull();
                Thread.sleep(20);
                assertThat(frames.idleBuffers()).as("a one-off buffer is not kept").isEqualTo(2);
            }
            assertThat(received.get(10, TimeUnit.SECONDS)).isEqualTo(expected.toByteArray());
        }
    }

    @Test
    void failedSend_releasesItsBuffer_insteadOfReusingIt() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
             BlocksBuffers frames = new BlocksBuffers(16 << 10, 2)) {
            ServerConnection conn = ServerConnection.connect(new ServerAddress("127.0.0.1", server.getLocalPort()), Duration.ofSeconds(5));
            server.accept().close(); // the peer goes away: the write fails
            long closing = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (conn.isActive() && System.nanoTime() < closing) {
                Thread.sleep(2);
            }
            assertThat(conn.isActive()).isFalse();
            Blocks b = frame(frames, 1, 9);
            ByteBuf buffer = b.data();
            CompletableFuture<Throwable> sent = new CompletableFuture<>();
            frames.send(conn, b, sent::complete);
            assertThat(sent.get(5, TimeUnit.SECONDS)).isNotNull();
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (buffer.refCnt() != 0 && System.nanoTime() < until) {
                Thread.sleep(2);
            }
            assertThat(buffer.refCnt()).isZero();
            assertThat(frames.idleBuffers()).isZero();
            conn.close();
        }
    }
}
