package org.holdfast.bench.workload;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A sparse image file written block by block; consecutive blocks are gathered into one write so
 * that generating a volume runs at disk speed.
 */
public final class VolumeImage implements AutoCloseable {
    private static final int BATCH_BLOCKS = 256;

    private final Path path;
    private final FileChannel channel;
    private final long blocks;
    private final byte[] batch = new byte[BATCH_BLOCKS * BlockContent.BLOCK];
    private long batchStart = -1;
    private int batchCount;

    private VolumeImage(Path path, FileChannel channel, long blocks) {
        this.path = path;
        this.channel = channel;
        this.blocks = blocks;
    }

    /** Creates (or truncates) a sparse image of {@code bytes} bytes, all zero. */
    public static VolumeImage create(Path path, long bytes) throws IOException {
        Files.createDirectories(path.toAbsolutePath().getParent());
        Files.deleteIfExists(path);
        FileChannel ch = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                StandardOpenOption.WRITE, StandardOpenOption.SPARSE);
        if (bytes <= 0 || bytes % BlockContent.BLOCK != 0) {
            throw new IllegalArgumentException("image size must be a positive multiple of " + BlockContent.BLOCK + ": " + bytes);
        }
        ch.write(ByteBuffer.wrap(new byte[1]), bytes - 1);
        return new VolumeImage(path, ch, bytes / BlockContent.BLOCK);
    }

    /** Opens an existing image for in-place changes. */
    public static VolumeImage open(Path path) throws IOException {
        FileChannel ch = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE);
        return new VolumeImage(path, ch, ch.size() / BlockContent.BLOCK);
    }

    /** The file behind this image. */
    public Path path() {
        return path;
    }

    /** Number of whole blocks. */
    public long blocks() {
        return blocks;
    }

    /** Writes one generated block at {@code lbn}, only the first {@code len} bytes if len is short. */
    public void writeBlock(long lbn, BlockContent.Kind kind, long key, int len) throws IOException {
        if (lbn < 0 || lbn >= blocks) {
            throw new IllegalArgumentException("block " + lbn + " outside image of " + blocks + " blocks");
        }
        if (len < BlockContent.BLOCK) {
            flush();
            byte[] one = new byte[BlockContent.BLOCK];
            BlockContent.fill(kind, key, one, 0, BlockContent.BLOCK);
            writeFully(ByteBuffer.wrap(one, 0, len), lbn * BlockContent.BLOCK);
            return;
        }
        if (batchCount > 0 && (lbn != batchStart + batchCount || batchCount == BATCH_BLOCKS)) {
            flush();
        }
        if (batchCount == 0) {
            batchStart = lbn;
        }
        BlockContent.fill(kind, key, batch, batchCount * BlockContent.BLOCK, BlockContent.BLOCK);
        batchCount++;
    }

    /** Writes raw bytes at a byte offset (used for unaligned edits). */
    public void writeBytes(long offset, byte[] bytes, int off, int len) throws IOException {
        flush();
        writeFully(ByteBuffer.wrap(bytes, off, len), offset);
    }

    /** Reads raw bytes at a byte offset. */
    public void readBytes(long offset, byte[] dst, int off, int len) throws IOException {
        flush();
        ByteBuffer b = ByteBuffer.wrap(dst, off, len);
        long pos = offset;
        while (b.hasRemaining()) {
            int n = channel.read(b, pos);
            if (n < 0) {
                break;
            }
            pos += n;
        }
    }

    /** Writes out gathered blocks. */
    public void flush() throws IOException {
        if (batchCount > 0) {
            writeFully(ByteBuffer.wrap(batch, 0, batchCount * BlockContent.BLOCK), batchStart * BlockContent.BLOCK);
            batchCount = 0;
        }
    }

    private void writeFully(ByteBuffer b, long pos) throws IOException {
        while (b.hasRemaining()) {
            pos += channel.write(b, pos);
        }
    }

    @Override
    public void close() throws IOException {
        flush();
        channel.force(false);
        channel.close();
    }
}
