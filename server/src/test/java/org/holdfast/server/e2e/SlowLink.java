package org.holdfast.server.e2e;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP relay on loopback that passes bytes both ways at a capped rate, as a slow network link
 * would: TLS and the protocol pass through untouched. Tests that must catch a command in the middle
 * of its transfer (Ctrl-C while writing) aim the agent at it, so that the command is still running
 * however slow or fast the machine is.
 */
final class SlowLink implements AutoCloseable {
    private static final int CHUNK = 16 * 1024;

    private final ServerSocket listener;
    private final InetSocketAddress upstream;
    private final long bytesPerSecond;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();

    private SlowLink(InetSocketAddress upstream, long bytesPerSecond) throws IOException {
        this.upstream = upstream;
        this.bytesPerSecond = bytesPerSecond;
        this.listener = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
        Thread accept = new Thread(this::acceptLoop, "slow-link-accept");
        accept.setDaemon(true);
        accept.start();
    }

    /** A relay to {@code hostPort} ("host:port") that carries at most {@code bytesPerSecond} each way. */
    static SlowLink to(String hostPort, long bytesPerSecond) throws IOException {
        int colon = hostPort.lastIndexOf(':');
        return new SlowLink(new InetSocketAddress(hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1))),
                bytesPerSecond);
    }

    /** The relay's own address, "127.0.0.1:port", to give an agent as {@code --server}. */
    String address() {
        return listener.getInetAddress().getHostAddress() + ":" + listener.getLocalPort();
    }

    private void acceptLoop() {
        while (!listener.isClosed()) {
            Socket client;
            try {
                client = listener.accept();
            } catch (IOException e) {
                return; // closed
            }
            sockets.add(client);
            try {
                Socket server = new Socket(upstream.getAddress(), upstream.getPort());
                sockets.add(server);
                pump(client, server, "slow-link-up");
                pump(server, client, "slow-link-down");
            } catch (IOException e) {
                closeQuietly(client); // the server is gone: so is this connection, as over a real link
            }
        }
    }

    private void pump(Socket from, Socket to, String name) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[CHUNK];
            long start = System.nanoTime();
            long sent = 0;
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buf)) > 0) {
                    out.write(buf, 0, n);
                    sent += n;
                    long dueNanos = sent * 1_000_000_000L / bytesPerSecond;
                    long aheadMillis = (dueNanos - (System.nanoTime() - start)) / 1_000_000L;
                    if (aheadMillis > 0) {
                        Thread.sleep(aheadMillis);
                    }
                }
            } catch (IOException | InterruptedException e) {
                // one side went away: the other follows below
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, name);
        t.setDaemon(true);
        t.start();
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // already closed
        }
    }

    @Override
    public void close() throws IOException {
        listener.close();
        sockets.forEach(SlowLink::closeQuietly);
    }
}
