package org.holdfast.server.store.object;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An HTTP proxy in front of an object store that injects the store's failures. Every request gets
 * its own connection ({@code Connection: close} is put in its headers), so a fault hits one request.
 * The next {@link #failNext} requests are answered 503 Slow Down, the next {@link #notFoundNext}
 * 404 by something other than the store, the answers to the next
 * {@link #cutNext} are cut off; with {@link #faults} set, a seeded
 * share of the others is answered 503 Slow Down, reset without an answer, cut off part-way through
 * the store's answer (a PUT is then stored although the client never heard so), or delayed. The
 * rest pass through byte for byte.
 */
public final class SlowDownProxy implements AutoCloseable {
    private static final byte[] SLOW_DOWN_BODY = ("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>SlowDown</Code>"
            + "<Message>Please reduce your request rate.</Message></Error>").getBytes(StandardCharsets.UTF_8);

    /** Shares (0..1) of requests answered 503, reset, cut off mid-answer, and delayed by {@code delay}. */
    public record Faults(double slowDown, double reset, double cut, double delay, Duration delayBy, long seed) {
    }

    private final ServerSocket server;
    private final int upstreamPort;
    private final AtomicInteger failNext = new AtomicInteger();
    private final AtomicInteger cutNext = new AtomicInteger();
    private final AtomicInteger notFoundNext = new AtomicInteger();
    private volatile byte[] notFoundAnswer;
    private final AtomicInteger refused = new AtomicInteger();
    private final AtomicInteger resets = new AtomicInteger();
    private final AtomicInteger cuts = new AtomicInteger();
    private final AtomicInteger delays = new AtomicInteger();
    private final AtomicInteger passed = new AtomicInteger();
    private volatile Faults faults;
    private Random random = new Random(0);

    public SlowDownProxy(int upstreamPort) throws IOException {
        this.upstreamPort = upstreamPort;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread t = new Thread(this::accept, "slow-down-proxy");
        t.setDaemon(true);
        t.start();
    }

    public int port() {
        return server.getLocalPort();
    }

    /** The next {@code n} requests get 503 Slow Down. */
    public void failNext(int n) {
        failNext.set(n);
    }

    /** The store's answers to the next {@code n} requests are cut off after 40 bytes (within the status line or headers). */
    public void cutNext(int n) {
        cutNext.set(n);
    }

    /**
     * The next {@code n} requests get 404 with {@code contentType} and {@code body}, not from the
     * store: as a load balancer or web server in front of a wrong endpoint answers.
     */
    public void notFoundNext(int n, String contentType, String body) {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        byte[] head = ("HTTP/1.1 404 Not Found\r\nContent-Type: " + contentType + "\r\nContent-Length: " + b.length
                + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
        byte[] all = new byte[head.length + b.length];
        System.arraycopy(head, 0, all, 0, head.length);
        System.arraycopy(b, 0, all, head.length, b.length);
        notFoundAnswer = all;
        notFoundNext.set(n);
    }

    /** Injects {@code f} into every request from now on (null: none). */
    public synchronized void faults(Faults f) {
        random = new Random(f == null ? 0 : f.seed());
        faults = f;
    }

    /** Requests answered with 503 so far. */
    public int refused() {
        return refused.get();
    }

    /** Requests reset without an answer so far. */
    public int resets() {
        return resets.get();
    }

    /** Requests whose answer was cut off so far. */
    public int cuts() {
        return cuts.get();
    }

    /** Requests delayed so far. */
    public int delays() {
        return delays.get();
    }

    /** Requests passed to the store (delayed and cut ones included). */
    public int passed() {
        return passed.get();
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket s = server.accept();
                Thread t = new Thread(() -> serve(s), "slow-down-proxy-conn");
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private enum Fault { NONE, SLOW_DOWN, RESET, CUT, CUT_SHORT, DELAY, NOT_FOUND }

    private synchronized Fault next() {
        if (notFoundNext.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            return Fault.NOT_FOUND;
        }
        if (failNext.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            return Fault.SLOW_DOWN;
        }
        if (cutNext.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            return Fault.CUT_SHORT;
        }
        Faults f = faults;
        if (f == null) {
            return Fault.NONE;
        }
        double r = random.nextDouble();
        return r < f.slowDown() ? Fault.SLOW_DOWN : (r -= f.slowDown()) < f.reset() ? Fault.RESET
                : (r -= f.reset()) < f.cut() ? Fault.CUT : r - f.cut() < f.delay() ? Fault.DELAY : Fault.NONE;
    }

    private void serve(Socket client) {
        try (client) {
            InputStream in = new BufferedInputStream(client.getInputStream());
            byte[] head = readHeaders(in);
            if (head == null) {
                return;
            }
            Fault fault = next();
            switch (fault) {
                case SLOW_DOWN -> {
                    refused.incrementAndGet();
                    OutputStream out = client.getOutputStream();
                    out.write(("HTTP/1.1 503 Slow Down\r\nContent-Type: application/xml\r\nContent-Length: " + SLOW_DOWN_BODY.length
                            + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                    out.write(SLOW_DOWN_BODY);
                    out.flush();
                    return;
                }
                case NOT_FOUND -> {
                    OutputStream out = client.getOutputStream();
                    out.write(notFoundAnswer);
                    out.flush();
                    return;
                }
                case RESET -> {
                    resets.incrementAndGet();
                    client.setSoLinger(true, 0); // an RST, as a crashed store or a load balancer would send
                    return;
                }
                case DELAY -> {
                    delays.incrementAndGet();
                    Thread.sleep(faults.delayBy().toMillis());
                }
                default -> { }
            }
            passed.incrementAndGet();
            long cutAfter = -1;
            if (fault == Fault.CUT_SHORT) {
                cuts.incrementAndGet();
                cutAfter = 40;
            } else if (fault == Fault.CUT) {
                cuts.incrementAndGet();
                synchronized (this) {
                    // half within the status line and headers, half anywhere in the first 256 KiB
                    cutAfter = 30 + random.nextInt(random.nextBoolean() ? 300 : 256 << 10);
                }
            }
            try (Socket upstream = new Socket(InetAddress.getLoopbackAddress(), upstreamPort)) {
                long limit = cutAfter;
                InputStream answer = upstream.getInputStream();
                Thread back = new Thread(() -> pipe(answer, upstream, client, limit), "slow-down-proxy-back");
                back.setDaemon(true);
                back.start();
                OutputStream up = upstream.getOutputStream();
                up.write(closeAfterThis(head));
                pipe(in, client, upstream, -1);
                back.join();
            }
        } catch (IOException | InterruptedException e) {
            // the client or the store hung up: nothing to do for a test proxy
        }
    }

    /** The request line and headers, up to and including the blank line; null if the client hung up first. */
    private static byte[] readHeaders(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        byte[] end = {'\r', '\n', '\r', '\n'};
        for (int b = in.read(); b >= 0; b = in.read()) {
            head.write(b);
            matched = b == end[matched] ? matched + 1 : (b == '\r' ? 1 : 0);
            if (matched == 4) {
                return head.toByteArray();
            }
        }
        return null;
    }

    /** The headers with any {@code Connection} header replaced by {@code Connection: close}: one request per connection. */
    private static byte[] closeAfterThis(byte[] head) {
        String[] lines = new String(head, StandardCharsets.ISO_8859_1).split("\r\n");
        StringBuilder b = new StringBuilder();
        for (String l : lines) {
            if (!l.isEmpty() && !l.regionMatches(true, 0, "connection:", 0, 11)) {
                b.append(l).append("\r\n");
            }
        }
        return b.append("Connection: close\r\n\r\n").toString().getBytes(StandardCharsets.ISO_8859_1);
    }

    /** Copies {@code from} to {@code to}'s socket; with {@code limit >= 0} stops after that many bytes and resets both. */
    private static void pipe(InputStream from, Socket source, Socket to, long limit) {
        try {
            OutputStream out = to.getOutputStream();
            byte[] buf = new byte[8192];
            long sent = 0;
            for (int n = from.read(buf); n >= 0; n = from.read(buf)) {
                if (limit >= 0 && sent + n >= limit) {
                    out.write(buf, 0, (int) (limit - sent));
                    out.flush();
                    to.setSoLinger(true, 0);
                    to.close();
                    source.close();
                    return;
                }
                out.write(buf, 0, n);
                sent += n;
            }
            to.shutdownOutput();
        } catch (IOException e) {
            // one side closed
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
    }
}
