package org.holdfast.server.store.object;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy in front of an object store that answers the next {@link #failNext} connections with
 * 503 Slow Down (and closes them), then passes connections through byte for byte: the store
 * throttling, as S3 does under load.
 */
public final class SlowDownProxy implements AutoCloseable {
    private static final byte[] SLOW_DOWN_BODY = ("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>SlowDown</Code>"
            + "<Message>Please reduce your request rate.</Message></Error>").getBytes(StandardCharsets.UTF_8);

    private final ServerSocket server;
    private final int upstreamPort;
    private final AtomicInteger failNext = new AtomicInteger();
    private final AtomicInteger refused = new AtomicInteger();

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

    /** The next {@code n} connections get 503 Slow Down. */
    public void failNext(int n) {
        failNext.set(n);
    }

    /** Connections answered with 503 so far. */
    public int refused() {
        return refused.get();
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

    private void serve(Socket client) {
        try (client) {
            if (failNext.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                refused.incrementAndGet();
                skipHeaders(client.getInputStream());
                OutputStream out = client.getOutputStream();
                out.write(("HTTP/1.1 503 Slow Down\r\nContent-Type: application/xml\r\nContent-Length: " + SLOW_DOWN_BODY.length
                        + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                out.write(SLOW_DOWN_BODY);
                out.flush();
                return;
            }
            try (Socket upstream = new Socket(InetAddress.getLoopbackAddress(), upstreamPort)) {
                Thread back = new Thread(() -> pipe(upstream, client), "slow-down-proxy-back");
                back.setDaemon(true);
                back.start();
                pipe(client, upstream);
                back.join();
            }
        } catch (IOException | InterruptedException e) {
            // the client or the store hung up: nothing to do for a test proxy
        }
    }

    private static void skipHeaders(InputStream in) throws IOException {
        int matched = 0;
        byte[] end = {'\r', '\n', '\r', '\n'};
        for (int b = in.read(); b >= 0; b = in.read()) {
            matched = b == end[matched] ? matched + 1 : (b == '\r' ? 1 : 0);
            if (matched == 4) {
                return;
            }
        }
    }

    private static void pipe(Socket from, Socket to) {
        try {
            from.getInputStream().transferTo(to.getOutputStream());
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
