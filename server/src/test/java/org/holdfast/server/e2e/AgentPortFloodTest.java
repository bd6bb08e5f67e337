package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLSocket;
import org.awaitility.Awaitility;
import org.holdfast.server.e2e.WireProbe.ErrorFrame;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Floods the agent port of a real server process (TLS, as configured by default) and measures its
 * resident memory (VmRSS of the child) while a real agent backs up and the backup restores.
 *
 * <p>The flood: 100 unauthenticated connections each claiming a 16 MiB frame (refused at once,
 * LIMIT_EXCEEDED), 10 sending 128 KiB of junk before HELLO (closed), 12 authenticated connections
 * each claiming a 16 MiB frame and pushing 15 MiB of it before stalling (the in-flight budget, 64 MiB
 * here, lets 3 of them in; the others wait without being read), 5 senders trickling a frame below
 * the minimum rate (closed, LIMIT_EXCEEDED), 20 idle connections (closed at the HELLO deadline),
 * then connections over the per-source maximum (refused).
 *
 * <p>Bound: the server's RSS during the flood stays below its RSS before it plus
 * {@link #RSS_HEADROOM} (the in-flight budget, up to twice over while a decoder's cumulation buffer grows
 * by copying, plus TLS and socket state; without the limits the 12 claimers alone would hold 180 MiB
 * of buffers, the 91 connections held 1.5 GB).
 */
class AgentPortFloodTest {
    private static final long RSS_HEADROOM = 256L << 20;
    private static final long BUDGET = 64L << 20;
    private static final int MAX_FRAME = WireProbe.MAX_FRAME;

    @TempDir
    Path dir;

    @Test
    void flood_claimsSlowIdleAndOverLimitConnections_rssBoundedAndABackupRunsAndRestores() throws Exception {
        LogDir logs = new LogDir("AgentPortFloodTest");
        AgentProcess agent = new AgentProcess(logs);
        List<Socket> held = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(48);
        try (ServerProcess server = ServerProcess.start(dir.resolve("server"), "exact", Map.of(
                "holdfast.ingest.max-inflight-bytes", "64MB",
                "holdfast.ingest.min-frame-rate", "256KB",
                "holdfast.ingest.frame-grace", "2s",
                "holdfast.ingest.max-connections-per-source", "80"), logs)) {
            // the baseline is the idle server just started: what the backup during the flood costs counts against the bound
            Path state = Files.createDirectories(dir.resolve("state"));
            long t0 = System.nanoTime();
            long before = rss(server);
            RssSampler sampler = new RssSampler(server);
            sampler.start();

            // 100 unauthenticated claims of a 16 MiB frame: refused before anything is buffered
            List<Future<ErrorFrame>> claims = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                claims.add(pool.submit(() -> claimBeforeHello(server)));
            }
            for (Future<ErrorFrame> f : claims) {
                ErrorFrame e = f.get(60, TimeUnit.SECONDS);
                assertThat(e).as("an ERROR for a 16 MiB claim before HELLO").isNotNull();
                assertThat(e.code()).isEqualTo(WireProbe.E_LIMIT_EXCEEDED);
                assertThat(e.message()).contains("before the HELLO was accepted");
            }

            // 20 connections sending 128 KiB of junk before any HELLO: refused and closed (the server lingers so the ERROR arrives; the check accepts a close with or without it: this is about the flood, AgentPortLingerTest about the ERROR)
            List<Future<Boolean>> junk = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                int seed = i;
                junk.add(pool.submit(() -> {
                    try (Socket s = tls(server)) {
                        byte[] noise = new byte[128 << 10];
                        new java.util.Random(seed).nextBytes(noise);
                        try {
                            s.getOutputStream().write(noise);
                            s.getOutputStream().flush();
                        } catch (IOException closedWhileWriting) {
                            return true;
                        }
                        s.setSoTimeout(20_000);
                        return readErrorOrClose(s);
                    }
                }));
            }
            for (Future<Boolean> f : junk) {
                assertThat(f.get(60, TimeUnit.SECONDS)).as("junk before HELLO closes the connection").isTrue();
            }
            phase("claims and junk before HELLO refused", t0);
            // 12 authenticated claimers pushing 15 MiB each, then stalling
            AtomicLong pushed = new AtomicLong();
            for (int i = 0; i < 12; i++) {
                Socket s = tls(server);
                held.add(s);
                hello(s, server.agentToken());
                pool.submit(() -> {
                    try {
                        OutputStream out = s.getOutputStream();
                        out.write(header(MAX_FRAME, WireProbe.BLOCKS));
                        byte[] chunk = new byte[1 << 20];
                        for (int k = 0; k < 15; k++) {
                            out.write(chunk);
                            out.flush();
                            pushed.addAndGet(chunk.length);
                        }
                    } catch (IOException e) {
                        // closed at the end of the test while blocked: expected
                    }
                    return null;
                });
            }
            Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> metric(server, "holdfast_ingest_inflight_bytes") >= 3 * 16e6);

            // 20 idle connections (TLS, nothing sent) and 5 slow senders
            List<Socket> idle = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                Socket s = tls(server);
                idle.add(s);
                held.add(s);
            }
            List<Future<ErrorFrame>> slow = new ArrayList<>();
            AtomicBoolean stop = new AtomicBoolean();
            for (int i = 0; i < 5; i++) {
                slow.add(pool.submit(() -> {
                    try (Socket s = tls(server)) {
                        hello(s, server.agentToken());
                        OutputStream out = s.getOutputStream();
                        out.write(header(1 << 20, WireProbe.BLOCKS));
                        out.flush();
                        s.setSoTimeout(200);
                        for (int k = 0; k < 150 && !stop.get(); k++) {
                            out.write(new byte[1024]); // 5 KiB/s against a minimum of 256 KiB/s
                            out.flush();
                            try {
                                return readError(s);
                            } catch (java.net.SocketTimeoutException notYet) {
                                // keep trickling
                            }
                        }
                        return null;
                    } catch (IOException e) {
                        return new ErrorFrame(-1, String.valueOf(e));
                    }
                }));
            }

            phase("claimers, idle and slow connections open", t0);
            // meanwhile a normal backup through the real agent, and its restore
            VolumeImage image = VolumeImage.generate(2, 6 << 20);
            Path source = image.writeTo(dir.resolve("during.img"));
            agent.backup(server, "during", source, state, "--block-size", "4096");
            try (WireProbe p = new WireProbe(server.ingestPort(), server.clientTls(), server.agentToken())) {
                p.hello();
                assertThat(p.listSnapshots("during")).containsExactly(1L);
                assertThat(p.restore("during", 1)).isEqualTo(Files.readAllBytes(source));
            }

            phase("backup and restore done", t0);
            for (Future<ErrorFrame> f : slow) {
                ErrorFrame e = f.get(40, TimeUnit.SECONDS);
                assertThat(e).as("a slow sender is told").isNotNull();
                assertThat(e.code()).as("%s", e).isEqualTo(WireProbe.E_LIMIT_EXCEEDED);
                assertThat(e.message()).contains("slower than the minimum");
            }
            stop.set(true);

            // over the per-source maximum (80): refused with an ERROR
            List<Socket> extra = new ArrayList<>();
            ErrorFrame refused = null;
            for (int i = 0; i < 80 && refused == null; i++) {
                Socket s = tls(server);
                extra.add(s);
                refused = helloOrError(s, server.agentToken()); // admitted ones stay open, authenticated
            }
            held.addAll(extra);
            phase("over-limit refused", t0);
            assertThat(refused).as("a connection over the per-source maximum is refused").isNotNull();
            assertThat(refused.code()).isEqualTo(WireProbe.E_LIMIT_EXCEEDED);
            assertThat(refused.message()).contains("max-connections-per-source");

            long inflight = (long) metric(server, "holdfast_ingest_inflight_bytes");
            assertThat(inflight).as("in-flight bytes within the budget").isLessThanOrEqualTo(BUDGET);
            long during = sampler.stop();
            long pushedDuring = pushed.get();

            // idle connections were closed by the server (HELLO deadline, 15 s)
            for (Socket s : idle) {
                s.setSoTimeout(20_000);
                assertThat(readErrorOrClose(s)).as("an idle connection is closed by the server").isTrue();
            }
            for (Socket s : held) {
                abort(s);
            }
            held.clear();
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> metric(server, "holdfast_ingest_inflight_bytes") == 0);
            Thread.sleep(1000);
            long after = rss(server);
            String figures = String.format("AgentPortFloodTest: server RSS before %d MiB, peak during the flood %d MiB, after %d MiB;"
                    + " client pushed %d MiB into stalled frames", before >> 20, during >> 20, after >> 20, pushedDuring >> 20);
            System.out.println(figures);
            Files.writeString(logs.next("figures")[0], figures + "\n");
            assertThat(during).as(figures).isLessThan(before + RSS_HEADROOM);
            assertThat(server.isAlive()).isTrue();
            assertThat(server.get("/actuator/health").body()).contains("\"UP\"");
            assertThat(metric(server, "holdfast_ingest_limited_total")).as("connections closed by limits").isGreaterThanOrEqualTo(106);
            assertThat(pushedDuring).as("the stalled claimers could push more than the budget: the bound is not for want of trying")
                    .isGreaterThan(BUDGET);
        } finally {
            for (Socket s : held) {
                abort(s);
            }
            pool.shutdownNow();
        }
    }

    /**
     * One connection claiming a 16 MiB frame before HELLO; its ERROR. A claim refused by the
     * per-source maximum instead is tried again: the server counts a connection until it has seen
     * the close, and on a busy machine its event loops can be behind the accept thread by more than
     * the 32 slots between this phase's 48 client threads and the maximum of 80.
     */
    private static ErrorFrame claimBeforeHello(ServerProcess server) throws IOException, InterruptedException {
        for (int attempt = 0; ; attempt++) {
            ErrorFrame e;
            try (Socket s = tls(server)) {
                OutputStream out = s.getOutputStream();
                out.write(header(MAX_FRAME, WireProbe.BLOCKS));
                out.flush();
                e = readError(s);
            }
            if (e == null || !e.message().contains("max-connections-per-source") || attempt == 50) {
                return e;
            }
            Thread.sleep(100);
        }
    }

    private static void phase(String what, long t0) {
        System.out.printf("AgentPortFloodTest: %.1f s: %s%n", (System.nanoTime() - t0) / 1e9, what);
    }

    /** The TCP socket under each TLS socket: closing that never blocks, unlike a TLS close_notify to a server that is not reading. */
    private static final Map<Socket, Socket> PLAIN = new java.util.concurrent.ConcurrentHashMap<>();

    private static void abort(Socket s) {
        try {
            Socket plain = PLAIN.remove(s);
            (plain != null ? plain : s).close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    private static Socket tls(ServerProcess server) throws IOException {
        Socket plain = new Socket();
        plain.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.ingestPort()), 5000);
        plain.setSoTimeout(30_000);
        SSLSocket s = (SSLSocket) server.clientTls().getSocketFactory().createSocket(plain, "127.0.0.1", server.ingestPort(), true);
        s.startHandshake();
        PLAIN.put(s, plain);
        return s;
    }

    private static byte[] header(int length, int type) {
        return ByteBuffer.allocate(6).putInt(length).put((byte) WireProbe.VERSION).put((byte) type).array();
    }

    private static void hello(Socket s, String token) throws IOException {
        ErrorFrame e = helloOrError(s, token);
        assertThat(e).as("HELLO_OK").isNull();
    }

    /** Sends HELLO; null when HELLO_OK comes back, else the ERROR. */
    private static ErrorFrame helloOrError(Socket s, String token) throws IOException {
        byte[] body = WireProbe.body().u32(WireProbe.MAGIC).u16(WireProbe.VERSION).str("flood").str(token).bytes();
        OutputStream out = s.getOutputStream();
        out.write(ByteBuffer.allocate(6 + body.length).putInt(2 + body.length).put((byte) WireProbe.VERSION)
                .put((byte) WireProbe.HELLO).put(body).array());
        out.flush();
        java.io.DataInputStream in = new java.io.DataInputStream(s.getInputStream());
        int length = in.readInt();
        int version = in.readUnsignedByte();
        int type = in.readUnsignedByte();
        byte[] rest = new byte[length - 2];
        in.readFully(rest);
        if (type == WireProbe.ERROR) {
            return WireProbe.parseError(new WireProbe.Frame(version, type, rest));
        }
        assertThat(type).as("HELLO_OK").isEqualTo(WireProbe.HELLO_OK);
        return null;
    }

    /** The ERROR frame the server sends, or null if it closes without one. */
    private static ErrorFrame readError(Socket s) throws IOException {
        java.io.DataInputStream in = new java.io.DataInputStream(s.getInputStream());
        int length;
        try {
            length = in.readInt();
        } catch (java.io.EOFException | java.net.SocketException closed) {
            return null;
        }
        int version = in.readUnsignedByte();
        int type = in.readUnsignedByte();
        byte[] body = new byte[length - 2];
        in.readFully(body);
        assertThat(type).as("an ERROR frame").isEqualTo(WireProbe.ERROR);
        return WireProbe.parseError(new WireProbe.Frame(version, type, body));
    }

    /** True if the server closes the connection (an ERROR first is fine). */
    private static boolean readErrorOrClose(Socket s) {
        try {
            java.io.InputStream in = s.getInputStream();
            byte[] buf = new byte[4096];
            while (in.read(buf) >= 0) {
                // an ERROR frame, then the close
            }
            return true;
        } catch (java.net.SocketTimeoutException e) {
            return false;
        } catch (IOException e) {
            return true; // reset: closed
        }
    }

    /** VmRSS of the server process, from /proc. */
    static long rss(ServerProcess server) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/" + server.process().pid() + "/status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        throw new IllegalStateException("no VmRSS for pid " + server.process().pid());
    }

    /** A Prometheus sample's value from /actuator/prometheus. */
    private static double metric(ServerProcess server, String name) {
        for (String line : server.get("/actuator/prometheus").body().split("\n")) {
            if (line.startsWith(name + " ") || line.startsWith(name + "{")) {
                return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        throw new AssertionError("no metric " + name);
    }

    /** Samples the server's RSS every 100 ms and keeps the peak. */
    private static final class RssSampler {
        private final ServerProcess server;
        private final AtomicLong peak = new AtomicLong();
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        private Thread thread;

        RssSampler(ServerProcess server) {
            this.server = server;
        }

        void start() {
            thread = new Thread(() -> {
                while (running.get()) {
                    try {
                        peak.accumulateAndGet(rss(server), Math::max);
                        Thread.sleep(100);
                    } catch (InterruptedException e) {
                        return;
                    } catch (RuntimeException e) {
                        errors.add(e);
                        return;
                    }
                }
            }, "rss-sampler");
            thread.setDaemon(true);
            thread.start();
        }

        long stop() throws InterruptedException {
            running.set(false);
            thread.join(5000);
            assertThat(errors).isEmpty();
            return peak.get();
        }
    }
}
