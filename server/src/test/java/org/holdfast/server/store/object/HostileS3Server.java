package org.holdfast.server.store.object;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.holdfast.common.ports.TestPorts;

/**
 * A tiny real HTTP server on a loopback port that answers as a misbehaving S3 endpoint does (a HEAD
 * 404 for an object that exists, Range ignored, an odd Content-Range, a 416, a truncated listing):
 * the answers S3Proxy never gives. Not a stand-in for holdfast's storage but a hostile peer; raw
 * sockets, so that every header (Content-Length on a HEAD, none at all) is the test's to choose.
 * One request per connection ({@code Connection: close} on every answer).
 */
final class HostileS3Server implements AutoCloseable {
    /** A request as it arrived: method, target (path and query), headers by lower-case name. */
    record Request(String method, String target, Map<String, String> headers) {
        String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }

        /** The path without the query. */
        String path() {
            int q = target.indexOf('?');
            return q < 0 ? target : target.substring(0, q);
        }

        /** The query, or "". */
        String query() {
            int q = target.indexOf('?');
            return q < 0 ? "" : target.substring(q + 1);
        }
    }

    /** How to answer one request. */
    @FunctionalInterface
    interface Answer {
        void write(Request request, HostileS3Server server, OutputStream out) throws IOException;
    }

    private final ServerSocket server;
    private final List<Request> requests = new CopyOnWriteArrayList<>();
    private final AtomicLong bodyBytesSent = new AtomicLong();
    private final java.util.concurrent.atomic.AtomicInteger serving = new java.util.concurrent.atomic.AtomicInteger();
    private volatile Answer answer = (r, s, out) -> status(out, 500, "Internal Server Error");

    HostileS3Server() throws IOException {
        int port = TestPorts.claim();
        server = new ServerSocket(port, 50, InetAddress.getLoopbackAddress());
        Thread t = new Thread(this::accept, "hostile-s3");
        t.setDaemon(true);
        t.start();
    }

    URI endpoint() {
        return URI.create("http://127.0.0.1:" + server.getLocalPort());
    }

    /** Answers every request from now on with {@code a}. */
    void answer(Answer a) {
        answer = a;
        requests.clear();
        bodyBytesSent.set(0);
    }

    /** The requests since the last {@link #answer}. */
    List<Request> requests() {
        return List.copyOf(requests);
    }

    /** Body bytes written into sockets since the last {@link #answer} (kernel buffers included): what a client could have read. */
    long bodyBytesSent() {
        return bodyBytesSent.get();
    }

    /** Writes a status line, {@code headers} ("Name: value") and {@code Connection: close}; an empty body unless a header says otherwise. */
    static void status(OutputStream out, int code, String reason, String... headers) throws IOException {
        head(out, code, reason, true, headers);
    }

    /** As {@link #status}, without any Content-Length (for a HEAD answer that gives no length). */
    static void statusWithoutLength(OutputStream out, int code, String reason, String... headers) throws IOException {
        head(out, code, reason, false, headers);
    }

    private static void head(OutputStream out, int code, String reason, boolean addLength, String... headers) throws IOException {
        StringBuilder b = new StringBuilder("HTTP/1.1 ").append(code).append(' ').append(reason).append("\r\n");
        boolean length = !addLength;
        for (String h : headers) {
            b.append(h).append("\r\n");
            length |= h.regionMatches(true, 0, "content-length:", 0, 15);
        }
        if (!length) {
            b.append("Content-Length: 0\r\n");
        }
        out.write(b.append("Connection: close\r\n\r\n").toString().getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
    }

    /** A whole answer with a body: status, {@code headers}, its Content-Length, the body. */
    void withBody(OutputStream out, int code, String reason, String contentType, byte[] body, String... headers) throws IOException {
        String[] all = new String[headers.length + 2];
        System.arraycopy(headers, 0, all, 0, headers.length);
        all[headers.length] = "Content-Type: " + contentType;
        all[headers.length + 1] = "Content-Length: " + body.length;
        status(out, code, reason, all);
        out.write(body);
        out.flush();
        bodyBytesSent.addAndGet(body.length);
    }

    /** An S3 error answer: XML naming {@code s3Code}. */
    void s3Error(OutputStream out, int code, String reason, String s3Code, String... headers) throws IOException {
        withBody(out, code, reason, "application/xml", ("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>" + s3Code
                + "</Code><Message>" + s3Code + "</Message></Error>").getBytes(StandardCharsets.UTF_8), headers);
    }

    /**
     * A 200 declaring {@code length} bytes whose body is streamed (zeros) until the client stops
     * reading: as a server that ignores Range sends a large object. Counted in {@link #bodyBytesSent}.
     */
    void streamedWholeObject(OutputStream out, long length) throws IOException {
        status(out, 200, "OK", "Content-Type: application/octet-stream", "Content-Length: " + length, "ETag: \"hostile\"");
        byte[] chunk = new byte[64 << 10];
        for (long sent = 0; sent < length; sent += chunk.length) {
            int n = (int) Math.min(chunk.length, length - sent);
            out.write(chunk, 0, n); // fails once the client dropped the connection
            bodyBytesSent.addAndGet(n);
        }
        out.flush();
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket s = server.accept();
                Thread t = new Thread(() -> serve(s), "hostile-s3-conn");
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    /** Waits (up to 10 s) until no answer is being written: {@link #bodyBytesSent} is then final. */
    void awaitIdle() throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (serving.get() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
    }

    private void serve(Socket s) {
        serving.incrementAndGet();
        try (s) {
            InputStream in = new BufferedInputStream(s.getInputStream());
            String head = readHead(in);
            if (head == null) {
                return;
            }
            String[] lines = head.split("\r\n");
            String[] first = lines[0].split(" ");
            Map<String, String> headers = new TreeMap<>();
            for (int i = 1; i < lines.length; i++) {
                int colon = lines[i].indexOf(':');
                if (colon > 0) {
                    headers.put(lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT), lines[i].substring(colon + 1).trim());
                }
            }
            Request r = new Request(first[0], first[1], headers);
            requests.add(r);
            OutputStream out = s.getOutputStream();
            answer.write(r, this, out);
        } catch (IOException e) {
            // the client hung up (as it should after reading what it needs)
        } finally {
            serving.decrementAndGet();
        }
    }

    private static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        byte[] end = {'\r', '\n', '\r', '\n'};
        for (int b = in.read(); b >= 0; b = in.read()) {
            head.write(b);
            matched = b == end[matched] ? matched + 1 : (b == '\r' ? 1 : 0);
            if (matched == 4) {
                return head.toString(StandardCharsets.ISO_8859_1);
            }
        }
        return null;
    }

    @Override
    public void close() throws IOException {
        server.close();
    }
}
