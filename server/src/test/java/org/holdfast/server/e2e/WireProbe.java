package org.holdfast.server.e2e;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Speaks protocol v1 (docs/protocol.md) byte by byte over a socket (inside TLS when the server has it), written from the
 * document rather than from the codec so that it can also send what the codec never would:
 * malformed, oversized and lying frames.
 */
final class WireProbe implements AutoCloseable {
    static final int VERSION = 2;
    static final int MAGIC = 0x48465354;
    /** MAX_FRAME of protocol.md: 16 MiB + 64 KiB. */
    static final int MAX_FRAME = (16 << 20) + (64 << 10);

    static final int HELLO = 0x01;
    static final int HELLO_OK = 0x02;
    static final int ERROR = 0x03;
    static final int BACKUP_BEGIN = 0x10;
    static final int BACKUP_READY = 0x11;
    static final int ENTRIES = 0x12;
    static final int NEED = 0x13;
    static final int BLOCKS = 0x14;
    static final int COMMIT = 0x16;
    static final int COMMITTED = 0x17;
    static final int LIST_SNAPSHOTS = 0x20;
    static final int SNAPSHOT_LIST = 0x21;
    static final int RESTORE = 0x22;
    static final int RESTORE_INFO = 0x23;
    static final int RESTORE_DATA = 0x24;
    static final int RESTORE_END = 0x25;

    static final int E_BAD_FRAME = 1;
    static final int E_UNSUPPORTED_VERSION = 2;
    static final int E_UNKNOWN_VOLUME = 3;
    static final int E_UNKNOWN_SNAPSHOT = 4;
    static final int E_FINGERPRINT_MISMATCH = 5;
    static final int E_LIMIT_EXCEEDED = 6;
    static final int E_BAD_STATE = 7;

    /** One received frame. */
    record Frame(int version, int type, byte[] body) {
        ByteBuffer buffer() {
            return ByteBuffer.wrap(body);
        }
    }

    /** A received ERROR frame. */
    record ErrorFrame(int code, String message) {
    }

    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;

    /** The API token HELLO sends (the server refuses an empty one). */
    private final String token;

    WireProbe(int port) {
        this(port, null, System.getProperty("holdfast.e2e.token", ""));
    }

    WireProbe(int port, String token) {
        this(port, null, token);
    }

    /**
     * Over TLS from {@code tls} (null: plain TCP); the frames are the same, inside TLS. HELLO sends
     * {@code token}.
     */
    WireProbe(int port, javax.net.ssl.SSLContext tls, String token) {
        this.token = token;
        try {
            Socket plain = new Socket();
            plain.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 5000);
            plain.setSoTimeout(15_000);
            if (tls != null) {
                javax.net.ssl.SSLSocket s = (javax.net.ssl.SSLSocket) tls.getSocketFactory().createSocket(plain, "127.0.0.1", port, true);
                javax.net.ssl.SSLParameters p = s.getSSLParameters();
                p.setEndpointIdentificationAlgorithm("HTTPS"); // the self-signed certificate names 127.0.0.1
                s.setSSLParameters(p);
                s.startHandshake();
                socket = s;
            } else {
                socket = plain;
            }
            in = new DataInputStream(socket.getInputStream());
            out = socket.getOutputStream();
        } catch (IOException e) {
            throw new UncheckedIOException("connect 127.0.0.1:" + port, e);
        }
    }

    /** Sends a well-formed frame. */
    void send(int type, byte[] body) {
        ByteBuffer b = ByteBuffer.allocate(6 + body.length);
        b.putInt(2 + body.length).put((byte) VERSION).put((byte) type).put(body);
        raw(b.array());
    }

    /** Sends bytes as they are. */
    void raw(byte[] bytes) {
        try {
            out.write(bytes);
            out.flush();
        } catch (IOException e) {
            throw new UncheckedIOException("send", e);
        }
    }

    /** The next frame, or null if the server closed the connection. */
    Frame read() {
        try {
            int length;
            try {
                length = in.readInt();
            } catch (EOFException e) {
                return null;
            }
            if (length < 2 || length > MAX_FRAME) {
                throw new AssertionError("server sent a frame of length " + length);
            }
            int version = in.readUnsignedByte();
            int type = in.readUnsignedByte();
            byte[] body = new byte[length - 2];
            in.readFully(body);
            return new Frame(version, type, body);
        } catch (SocketException e) {
            return null; // reset by peer counts as closed
        } catch (IOException e) {
            throw new UncheckedIOException("read", e);
        }
    }

    /** Reads a frame and fails unless it has {@code type}. */
    Frame expect(int type) {
        Frame f = read();
        if (f == null) {
            throw new AssertionError("expected frame 0x" + Integer.toHexString(type) + ", server closed the connection");
        }
        if (f.type() == ERROR) {
            ErrorFrame e = parseError(f);
            throw new AssertionError("expected frame 0x" + Integer.toHexString(type) + ", got ERROR " + e);
        }
        if (f.type() != type) {
            throw new AssertionError("expected frame 0x" + Integer.toHexString(type) + ", got 0x" + Integer.toHexString(f.type()));
        }
        return f;
    }

    /** Reads frames until an ERROR (failing on close first) and returns it. */
    ErrorFrame expectError() {
        for (int i = 0; i < 1000; i++) {
            Frame f = read();
            if (f == null) {
                throw new AssertionError("expected an ERROR frame, the server closed the connection without one");
            }
            if (f.type() == ERROR) {
                return parseError(f);
            }
        }
        throw new AssertionError("no ERROR frame within 1000 frames");
    }

    /** True if the server closes the connection within the socket timeout (frames before the close are skipped). */
    boolean closedByServer() {
        try {
            for (int i = 0; i < 1000; i++) {
                if (read() == null) {
                    return true;
                }
            }
            return false;
        } catch (UncheckedIOException e) {
            if (e.getCause() instanceof SocketTimeoutException) {
                return false;
            }
            throw e;
        }
    }

    static ErrorFrame parseError(Frame f) {
        ByteBuffer b = f.buffer();
        int code = Short.toUnsignedInt(b.getShort());
        int len = Short.toUnsignedInt(b.getShort());
        byte[] msg = new byte[len];
        b.get(msg);
        return new ErrorFrame(code, new String(msg, StandardCharsets.UTF_8));
    }

    /** HELLO, expecting HELLO_OK. */
    void hello() {
        send(HELLO, body().u32(MAGIC).u16(VERSION).str("e2e-probe").str(token).bytes());
        expect(HELLO_OK);
    }

    /** LIST_SNAPSHOTS: the sequences of the volume's committed snapshots, in the server's order. */
    java.util.List<Long> listSnapshots(String volume) {
        send(LIST_SNAPSHOTS, body().str(volume).bytes());
        ByteBuffer b = expect(SNAPSHOT_LIST).buffer();
        int n = b.getInt();
        java.util.List<Long> seqs = new java.util.ArrayList<>();
        for (int i = 0; i < n; i++) {
            seqs.add(b.getLong());
            b.position(b.position() + 8 + 8 + 4 + 8 + 8 + 8);
        }
        return seqs;
    }

    /**
     * The ids ({@code volume@sequence}) of the volume's committed snapshots as the agent protocol
     * lists them (LIST_SNAPSHOTS, what {@code holdfast-agent snapshots} sends), over one connection:
     * for the crash loops' listing after each restart, without starting an agent JVM.
     */
    static java.util.List<String> snapshotIds(ServerProcess server, String volume) {
        org.holdfast.common.id.VolumeId v = new org.holdfast.common.id.VolumeId(volume);
        try (WireProbe p = new WireProbe(server.ingestPort(), server.clientTls(), server.agentToken())) {
            p.hello();
            return p.listSnapshots(volume).stream().map(s -> new org.holdfast.common.id.SnapshotId(v, s).toString()).toList();
        }
    }

    /**
     * RESTORE of a whole snapshot, decoded here independently of the agent: every payload is
     * checked against the SHA-256 beside it, and the image is cut to the volume's size.
     */
    byte[] restore(String volume, long sequence) {
        send(RESTORE, body().str(volume).u64(sequence).u64(0).bytes());
        ByteBuffer info = expect(RESTORE_INFO).buffer();
        long seq = info.getLong();
        long volumeBytes = info.getLong();
        int blockSize = info.getInt();
        long blockCount = info.getLong();
        if (seq != sequence || volumeBytes > Integer.MAX_VALUE - blockSize) {
            throw new AssertionError("RESTORE_INFO for " + sequence + ": sequence " + seq + ", " + volumeBytes + " bytes");
        }
        byte[] image = new byte[(int) (blockCount * blockSize)];
        long next = 0;
        java.security.MessageDigest sha = sha256();
        while (true) {
            Frame f = read();
            if (f == null) {
                throw new AssertionError("server closed the connection in the middle of a restore at LBN " + next);
            }
            if (f.type() == RESTORE_END) {
                break;
            }
            if (f.type() != RESTORE_DATA) {
                throw new AssertionError("unexpected frame 0x" + Integer.toHexString(f.type()) + " in a restore"
                        + (f.type() == ERROR ? ": " + parseError(f) : ""));
            }
            ByteBuffer b = f.buffer();
            long start = b.getLong();
            int n = b.getInt();
            if (start != next) {
                throw new AssertionError("RESTORE_DATA starts at LBN " + start + ", expected " + next);
            }
            for (int i = 0; i < n; i++, next++) {
                int codec = Byte.toUnsignedInt(b.get());
                if (codec == 0) {
                    continue; // zero block: the array is zero already
                }
                byte[] fp = new byte[32];
                b.get(fp);
                byte[] payload = new byte[b.getInt()];
                b.get(payload);
                byte[] block = codec == 1 ? payload : com.github.luben.zstd.Zstd.decompress(payload, blockSize);
                if (block.length != blockSize || !java.util.Arrays.equals(sha.digest(block), fp)) {
                    throw new AssertionError("LBN " + next + " of " + volume + "@" + sequence
                            + " does not match the fingerprint sent beside it");
                }
                System.arraycopy(block, 0, image, (int) (next * blockSize), blockSize);
            }
        }
        if (next != blockCount) {
            throw new AssertionError("restore of " + volume + "@" + sequence + " sent " + next + " of " + blockCount + " blocks");
        }
        return java.util.Arrays.copyOf(image, (int) volumeBytes);
    }

    private static java.security.MessageDigest sha256() {
        try {
            return java.security.MessageDigest.getInstance("SHA-256");
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** A body builder, big-endian. */
    static Body body() {
        return new Body();
    }

    /** Builds a frame body field by field. */
    static final class Body {
        private final ByteArrayOutputStream buf = new ByteArrayOutputStream();

        Body u8(int v) {
            buf.write(v);
            return this;
        }

        Body u16(int v) {
            buf.write(v >>> 8);
            buf.write(v);
            return this;
        }

        Body u32(long v) {
            u16((int) (v >>> 16) & 0xffff);
            return u16((int) v & 0xffff);
        }

        Body u64(long v) {
            u32(v >>> 32);
            return u32(v & 0xffffffffL);
        }

        Body str(String s) {
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            u16(b.length);
            buf.writeBytes(b);
            return this;
        }

        Body raw(byte[] b) {
            buf.writeBytes(b);
            return this;
        }

        byte[] bytes() {
            return buf.toByteArray();
        }
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException ignored) {
            // closing a probe socket that the server may already have reset
        }
    }
}
