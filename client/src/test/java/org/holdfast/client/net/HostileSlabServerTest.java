package org.holdfast.client.net;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.PooledByteBufAllocator;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.holdfast.client.AgentException;
import org.holdfast.common.protocol.PayloadCodec;
import org.holdfast.common.protocol.RestoreData;
import org.junit.jupiter.api.Test;

/**
 * A hostile server against the agent's slab reads: frames of every size class (tiny, just over a
 * slab's threshold, about 1 MiB, too big for a slab with its spill, bigger than a slab) written in
 * random pieces down to single bytes, then cut off mid-frame or ended with an absurd length field,
 * on several connections at once sharing a pool that keeps almost nothing (so most slabs are freed
 * explicitly). Frames are checked and released on worker threads, as a restore does. Every frame
 * must arrive byte for byte and stay so until released, and every slab must come back or be freed.
 */
class HostileSlabServerTest {
    private static final int BS = 4096;
    private static final int KEEP = 2;
    private static final int FRAMES = 24;
    /** Blocks per frame: tiny, under the slab threshold, over it, ~1 MiB, frame + spill over a slab, over a slab. */
    private static final int[] SIZES = {1, 60, 70, 250, 490, 760};

    private static List<byte[]> frames() {
        Random rnd = new Random(7);
        List<byte[]> out = new ArrayList<>();
        for (int f = 0; f < SIZES.length; f++) {
            RestoreData.Builder b = RestoreData.builder(PooledByteBufAllocator.DEFAULT, f * 1000L, SIZES[f] * BS);
            byte[] fp = new byte[32];
            byte[] payload = new byte[BS];
            for (int i = 0; i < SIZES[f]; i++) {
                rnd.nextBytes(fp);
                rnd.nextBytes(payload);
                b.add(PayloadCodec.RAW, fp, 0, payload, 0, BS);
            }
            out.add(RestoreFrameBytes.wire(b.build()));
        }
        return out;
    }

    /** How a hostile connection ends after its frames. */
    private enum Ending { CUT_MID_FRAME, ABSURD_LENGTH, CUT_IN_LENGTH_FIELD, AGENT_CLOSES_WHILE_SERVER_SENDS }

    @Test
    void oddPiecesAndBadEndings_onSeveralConnections_deliverExactBytes_andLeakNoSlab() throws Exception {
        List<byte[]> frames = frames();
        FrameSlabs slabs = new FrameSlabs(KEEP);
        List<ServerSocket> servers = new ArrayList<>();
        List<CompletableFuture<Integer>> clients = new ArrayList<>();
        try {
            for (Ending e : Ending.values()) {
                ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                servers.add(server);
                CompletableFuture.runAsync(() -> send(server, frames, e));
                clients.add(CompletableFuture.supplyAsync(() -> receive(server.getLocalPort(), frames, slabs, e)));
            }
            for (CompletableFuture<Integer> c : clients) {
                assertThat(c.get(90, TimeUnit.SECONDS)).as("frames checked and released").isEqualTo(FRAMES);
            }
        } finally {
            for (ServerSocket s : servers) {
                s.close();
            }
        }
        assertThat(slabs.tails()).as("reads went straight into slabs").isPositive();
        assertThat(slabs.allocated()).as("slabs were used").isPositive();
        assertThat(slabs.kept()).isLessThanOrEqualTo(KEEP);
        assertThat(slabs.live()).as("every slab given back or freed, the cut-off frames' too").isEqualTo(slabs.kept());
    }

    /** Writes FRAMES frames in random pieces (single bytes now and then, so length fields split), then the ending. */
    private static void send(ServerSocket server, List<byte[]> frames, Ending ending) {
        Random rnd = new Random(ending.ordinal());
        try (Socket s = server.accept(); OutputStream out = s.getOutputStream()) {
            RestoreFrameBytes.awaitAgent(s);
            s.setTcpNoDelay(true);
            int sent = ending == Ending.AGENT_CLOSES_WHILE_SERVER_SENDS ? Integer.MAX_VALUE : FRAMES;
            for (int i = 0; i < sent; i++) { // the endless one ends when the agent closes
                writeInPieces(out, frames.get(order(i)), rnd);
            }
            byte[] big = frames.get(3);
            switch (ending) {
                case CUT_MID_FRAME -> writeInPieces(out, Arrays.copyOf(big, big.length / 2), rnd);
                case ABSURD_LENGTH -> out.write(new byte[] {(byte) 0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff, 2, 0x0A, 0, 0});
                case CUT_IN_LENGTH_FIELD -> out.write(big, 0, 2);
                default -> throw new IllegalStateException(ending.name());
            }
            out.flush();
            Thread.sleep(100);
        } catch (IOException e) {
            // the agent closed first
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static int order(int i) {
        return (i * 7 + i / SIZES.length) % SIZES.length;
    }

    private static void writeInPieces(OutputStream out, byte[] frame, Random rnd) throws IOException {
        for (int at = 0; at < frame.length; ) {
            int n = rnd.nextInt(8) == 0 ? 1 + rnd.nextInt(5) : 1 + rnd.nextInt(200_000);
            n = Math.min(n, frame.length - at);
            out.write(frame, at, n);
            out.flush();
            at += n;
        }
    }

    /**
     * Takes the frames and hands each to one of two workers, which check it, hold it a little, check
     * it again and release it; then expects the connection to fail as the ending says.
     */
    private static int receive(int port, List<byte[]> frames, FrameSlabs slabs, Ending ending) {
        AtomicInteger done = new AtomicInteger();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        BlockingQueue<Object[]> work = new ArrayBlockingQueue<>(4);
        Thread[] workers = new Thread[2];
        for (int w = 0; w < workers.length; w++) {
            workers[w] = new Thread(() -> {
                try {
                    for (Object[] job; (job = work.take()).length == 2; ) {
                        RestoreData d = (RestoreData) job[0];
                        int i = (Integer) job[1];
                        try {
                            RestoreFrameBytes.check(d, frames.get(order(i)), i);
                            Thread.sleep(i % 3);
                            RestoreFrameBytes.check(d, frames.get(order(i)), i); // a slab reused or freed too early shows here
                            done.incrementAndGet();
                        } finally {
                            d.release();
                        }
                    }
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                }
            });
            workers[w].start();
        }
        try {
            takeFrames(port, frames, slabs, ending, work);
        } finally {
            stop(workers, work);
        }
        if (failure.get() != null) {
            throw new AssertionError("worker failed", failure.get());
        }
        return done.get();
    }

    /**
     * Takes FRAMES frames onto the workers' queue, then expects the ending's failure, or closes
     * the connection itself (with its inbox full and a frame half read) while the server still sends.
     */
    private static void takeFrames(int port, List<byte[]> frames, FrameSlabs slabs, Ending ending, BlockingQueue<Object[]> work) {
        try (ServerConnection conn = ServerConnection.connect(new ServerAddress("127.0.0.1", port), Duration.ofSeconds(5),
                ServerTrust.plain(), slabs)) {
            conn.blockSize(BS);
            RestoreFrameBytes.speakFirst(conn);
            for (int i = 0; i < FRAMES; i++) {
                RestoreData d = (RestoreData) conn.receive(Duration.ofSeconds(20));
                RestoreFrameBytes.check(d, frames.get(order(i)), i);
                work.put(new Object[] {d, i});
            }
            if (ending == Ending.AGENT_CLOSES_WHILE_SERVER_SENDS) {
                Thread.sleep(200); // the inbox fills up behind the frames taken
                return;
            }
            var refused = assertThatThrownBy(() -> conn.receive(Duration.ofSeconds(20))).isInstanceOf(AgentException.class);
            if (ending == Ending.ABSURD_LENGTH) {
                refused.hasMessageContaining("malformed frame");
            } else {
                refused.hasMessageContaining("closed the connection");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A stop mark per worker behind the frames queued, then waits for them. */
    private static void stop(Thread[] workers, BlockingQueue<Object[]> work) {
        try {
            for (int w = 0; w < workers.length; w++) {
                work.put(new Object[0]);
            }
            for (Thread w : workers) {
                w.join(30_000);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
