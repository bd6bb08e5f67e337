package org.holdfast.client.qcow2;

import java.io.EOFException;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * The reading half of an NBD client (the protocol of the NBD project's proto.md): fixed-newstyle
 * handshake, {@code NBD_OPT_GO} for the default export, then {@code NBD_CMD_READ} with simple
 * replies. One request at a time; {@link #read} is synchronized so several threads may share it.
 */
final class NbdClient implements AutoCloseable {
    static final long NBDMAGIC = 0x4e42444d41474943L; // "NBDMAGIC"
    static final long IHAVEOPT = 0x49484156454f5054L; // "IHAVEOPT"
    static final long OPTION_REPLY_MAGIC = 0x3e889045565a9L;
    static final int REQUEST_MAGIC = 0x25609513;
    static final int SIMPLE_REPLY_MAGIC = 0x67446698;
    static final int FLAG_FIXED_NEWSTYLE = 1;
    static final int FLAG_NO_ZEROES = 2;
    static final int OPT_GO = 7;
    static final int REP_ACK = 1;
    static final int REP_INFO = 3;
    static final int INFO_EXPORT = 0;
    static final short CMD_READ = 0;
    static final short CMD_DISC = 2;
    /** qemu-nbd serves reads of up to 32 MiB; the backup asks for 8 MiB chunks. */
    static final int MAX_READ = 32 << 20;

    private final SocketChannel ch;
    private final long size;
    private final ByteBuffer request = ByteBuffer.allocate(28);
    private final ByteBuffer reply = ByteBuffer.allocate(16);
    private long handle;

    private NbdClient(SocketChannel ch, long size) {
        this.ch = ch;
        this.size = size;
    }

    /** Connects to the server on unix socket {@code socket} and opens its default export. */
    static NbdClient connect(Path socket) throws IOException {
        SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            ch.connect(UnixDomainSocketAddress.of(socket));
            return new NbdClient(ch, handshake(ch));
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    private static long handshake(SocketChannel ch) throws IOException {
        ByteBuffer hello = readExactly(ch, 18);
        if (hello.getLong() != NBDMAGIC || hello.getLong() != IHAVEOPT) {
            throw new IOException("not an NBD server speaking the newstyle handshake");
        }
        int serverFlags = hello.getShort() & 0xffff;
        if ((serverFlags & FLAG_FIXED_NEWSTYLE) == 0) {
            throw new IOException("the NBD server does not offer the fixed-newstyle handshake");
        }
        writeAll(ch, ByteBuffer.allocate(4).putInt(FLAG_FIXED_NEWSTYLE | (serverFlags & FLAG_NO_ZEROES)).flip());
        // NBD_OPT_GO: export name "" (the default export), no information requests
        writeAll(ch, ByteBuffer.allocate(22).putLong(IHAVEOPT).putInt(OPT_GO).putInt(6).putInt(0).putShort((short) 0).flip());
        long size = -1;
        while (true) {
            ByteBuffer h = readExactly(ch, 20);
            if (h.getLong() != OPTION_REPLY_MAGIC || h.getInt() != OPT_GO) {
                throw new IOException("malformed NBD option reply");
            }
            int type = h.getInt();
            int length = h.getInt();
            if (length < 0 || length > 1 << 20) {
                throw new IOException("NBD option reply of " + length + " bytes");
            }
            ByteBuffer data = readExactly(ch, length);
            if (type == REP_ACK) {
                break;
            }
            if (type < 0) { // the high bit marks an error reply
                throw new IOException("the NBD server refused the export (reply type 0x" + Integer.toHexString(type) + "): "
                        + StandardCharsets.UTF_8.decode(data));
            }
            if (type == REP_INFO && length >= 12 && data.getShort(0) == INFO_EXPORT) {
                size = data.getLong(2);
            }
        }
        if (size < 0) {
            throw new IOException("the NBD server did not tell the export's size");
        }
        return size;
    }

    /** Size of the export in bytes. */
    long size() {
        return size;
    }

    /**
     * Reads up to {@code dst.remaining()} bytes at {@code offset} into {@code dst}; -1 at or past the
     * end of the export, as {@code FileChannel.read} does.
     */
    synchronized int read(ByteBuffer dst, long offset) throws IOException {
        if (offset >= size) {
            return -1;
        }
        int len = (int) Math.min(Math.min(dst.remaining(), MAX_READ), size - offset);
        if (len == 0) {
            return 0;
        }
        long h = ++handle;
        request.clear();
        request.putInt(REQUEST_MAGIC).putShort((short) 0).putShort(CMD_READ).putLong(h).putLong(offset).putInt(len).flip();
        writeAll(ch, request);
        reply.clear();
        readFully(ch, reply);
        reply.flip();
        if (reply.getInt() != SIMPLE_REPLY_MAGIC) {
            throw new IOException("unexpected NBD reply (structured replies were not negotiated)");
        }
        int error = reply.getInt();
        if (reply.getLong() != h) {
            throw new IOException("NBD reply for another request");
        }
        if (error != 0) {
            throw new IOException("NBD read of " + len + " bytes at " + offset + " failed with error " + error);
        }
        int limit = dst.limit();
        dst.limit(dst.position() + len);
        try {
            readFully(ch, dst);
        } finally {
            dst.limit(limit);
        }
        return len;
    }

    /** Says goodbye ({@code NBD_CMD_DISC}) and closes the socket. */
    @Override
    public synchronized void close() {
        try {
            if (ch.isOpen()) {
                request.clear();
                request.putInt(REQUEST_MAGIC).putShort((short) 0).putShort(CMD_DISC).putLong(++handle).putLong(0).putInt(0).flip();
                writeAll(ch, request);
            }
        } catch (IOException ignored) {
            // the server is gone already: nothing to say goodbye to
        } finally {
            try {
                ch.close();
            } catch (IOException ignored) {
                // closing a socket we only read from loses nothing
            }
        }
    }

    private static ByteBuffer readExactly(SocketChannel ch, int n) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(n);
        readFully(ch, b);
        return b.flip();
    }

    private static void readFully(SocketChannel ch, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (ch.read(b) < 0) {
                throw new EOFException("the NBD server closed the connection");
            }
        }
    }

    private static void writeAll(SocketChannel ch, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            ch.write(b);
        }
    }
}
