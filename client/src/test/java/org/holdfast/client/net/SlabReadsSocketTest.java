package org.holdfast.client.net;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.PooledByteBufAllocator;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.holdfast.common.protocol.PayloadCodec;
import org.holdfast.common.protocol.RestoreData;
import org.junit.jupiter.api.Test;

/**
 * Restore frames through real sockets into slabs while the consumer is slow and frames pile up:
 * every frame arrives byte for byte and stays unchanged while held, and several connections at
 * once stay within the pool's bound.
 */
class SlabReadsSocketTest {
    private static final int BS = 4096;
    private static final int CONNECTIONS = 3;
    private static final int FRAMES = 32;
    private static final int KEEP = 4;

    /** Six distinct RESTORE_DATA frames of about 1 MiB, as wire bytes. */
    private static List<byte[]> frames() {
        Random rnd = new Random(31);
        List<byte[]> out = new ArrayList<>();
        for (int f = 0; f < 6; f++) {
            RestoreData.Builder b = RestoreData.builder(PooledByteBufAllocator.DEFAULT, f * 1000L, 1 << 20);
            int blocks = 200 + rnd.nextInt(56);
            for (int i = 0; i < blocks; i++) {
                byte[] fp = new byte[32];
                rnd.nextBytes(fp);
                byte[] payload = new byte[BS];
                rnd.nextBytes(payload);
                b.add(PayloadCodec.RAW, fp, 0, payload, 0, BS);
            }
            out.add(RestoreFrameBytes.wire(b.build()));
        }
        return out;
    }

    @Test
    void slowConsumers_onSeveralConnections_getEveryByte_andStayWithinThePoolsBound() throws Exception {
        List<byte[]> frames = frames();
        FrameSlabs slabs = new FrameSlabs(KEEP);
        AtomicInteger peak = new AtomicInteger();
        AtomicBoolean running = new AtomicBoolean(true);
        Thread watch = new Thread(() -> {
            while (running.get()) {
                peak.accumulateAndGet(slabs.live(), Math::max);
                Thread.onSpinWait();
            }
        });
        watch.start();
        List<CompletableFuture<Integer>> clients = new ArrayList<>();
        List<ServerSocket> servers = new ArrayList<>();
        try {
            for (int c = 0; c < CONNECTIONS; c++) {
                ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                servers.add(server);
                CompletableFuture.runAsync(() -> send(server, frames));
                clients.add(CompletableFuture.supplyAsync(() -> receive(server.getLocalPort(), frames, slabs)));
            }
            for (CompletableFuture<Integer> c : clients) {
                assertThat(c.get(60, TimeUnit.SECONDS)).isEqualTo(FRAMES);
            }
        } finally {
            running.set(false);
            watch.join();
            for (ServerSocket s : servers) {
                s.close();
            }
        }
        // per connection: the inbox up to its high-water mark, a few decoded in the same read, the
        // consumer's three, the frame being read; the pool keeps KEEP beyond that
        int perConnection = ReadPause.HIGH_WATER + 8;
        assertThat(peak.get()).as("slabs live at the peak").isLessThanOrEqualTo(CONNECTIONS * perConnection + KEEP);
        assertThat(slabs.allocated()).as("slabs reused, not one per frame").isLessThan(CONNECTIONS * FRAMES);
        assertThat(slabs.tails()).as("reads went into the slabs").isGreaterThan(CONNECTIONS * FRAMES);
        assertThat(slabs.kept()).isLessThanOrEqualTo(KEEP);
        assertThat(slabs.live()).as("every slab given back or freed").isEqualTo(slabs.kept());
    }

    /** Writes FRAMES frames as fast as the socket takes them, then waits for the agent to close. */
    private static void send(ServerSocket server, List<byte[]> frames) {
        try (Socket s = server.accept(); OutputStream out = s.getOutputStream()) {
            RestoreFrameBytes.awaitAgent(s);
            for (int i = 0; i < FRAMES; i++) {
                out.write(frames.get(i % frames.size()));
            }
            out.flush();
            s.getInputStream().read(); // until the agent closes
        } catch (java.io.IOException e) {
            // the agent closed first: nothing left to send
        }
    }

    /** Takes the frames slowly, holding three, and checks each against what was sent when taken and when released. */
    private static int receive(int port, List<byte[]> frames, FrameSlabs slabs) {
        int got = 0;
        try (ServerConnection conn = ServerConnection.connect(new ServerAddress("127.0.0.1", port), Duration.ofSeconds(5),
                ServerTrust.plain(), slabs)) {
            conn.blockSize(BS);
            RestoreFrameBytes.speakFirst(conn);
            ArrayDeque<RestoreData> held = new ArrayDeque<>();
            ArrayDeque<Integer> which = new ArrayDeque<>();
            for (int i = 0; i < FRAMES; i++) {
                RestoreData d = (RestoreData) conn.receive(Duration.ofSeconds(20));
                RestoreFrameBytes.check(d, frames.get(i % frames.size()), i);
                held.add(d);
                which.add(i);
                if (i % 8 == 0) {
                    Thread.sleep(30); // the consumer falls behind: the inbox fills and reading pauses
                }
                while (held.size() > 3) {
                    int j = which.poll();
                    RestoreData old = held.poll();
                    RestoreFrameBytes.check(old, frames.get(j % frames.size()), j); // a slab reused too early would show here
                    old.release();
                    got++;
                }
            }
            while (!held.isEmpty()) {
                int j = which.poll();
                RestoreData old = held.poll();
                RestoreFrameBytes.check(old, frames.get(j % frames.size()), j);
                old.release();
                got++;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return got;
    }
}
