package org.holdfast.gc.gma;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.Map;
import org.holdfast.gc.GcStoreException;

/**
 * The GMA's double-write journal ({@code gc/gma.dw}): every chunk write is appended here first, and
 * only once the journal is forced does the chunk go to its place in {@code gma.dat}. A crash that
 * tears the in-place write leaves a durable copy here; a crash that tears the append leaves the old
 * chunk in place. After the GMA file is forced the journal is truncated, so it is empty at rest.
 *
 * <p>Record: header ({@link GmaFormat#JOURNAL_HEADER_BYTES}: magic "HGDW", reserved, chunk index),
 * then the sealed chunk (its checksum is seeded with the chunk index, so a record names its place).
 * Callers serialise on this object ({@link GcMetadataArray} holds its monitor across a sync).
 */
final class DoubleWriteJournal implements AutoCloseable {
    private static final String STORE = "gma-journal";
    private static final int RECORD_BYTES = GmaFormat.JOURNAL_HEADER_BYTES + GmaFormat.CHUNK_BYTES;

    private final Path file;
    private final FileChannel channel;
    /** Chunk → file offset of its newest record's chunk bytes, for chunks not yet written in place. */
    private final Map<Long, Long> pending = new LinkedHashMap<>();
    private final ByteBuffer header = ByteBuffer.allocate(GmaFormat.JOURNAL_HEADER_BYTES);
    private long end;

    private DoubleWriteJournal(Path file, FileChannel channel) throws IOException {
        this.file = file;
        this.channel = channel;
        this.end = channel.size();
    }

    static DoubleWriteJournal open(Path dir) {
        Path file = dir.resolve(GmaFormat.JOURNAL_FILE);
        try {
            return new DoubleWriteJournal(file, FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                    StandardOpenOption.WRITE));
        } catch (IOException e) {
            throw new GcStoreException(STORE, file, null, "cannot open: " + e.getMessage(), e);
        }
    }

    /** Visitor of the valid records left by a crash, in file order. */
    interface RecordVisitor {
        void visit(long chunk, ByteBuffer bytes);
    }

    /**
     * Visits every complete record whose header and chunk checksum are right (a torn or stale tail
     * is skipped: the chunk it would have carried is still in place).
     */
    synchronized void recover(RecordVisitor visitor) {
        ByteBuffer rec = ByteBuffer.allocate(RECORD_BYTES);
        for (long at = 0; at + RECORD_BYTES <= end; at += RECORD_BYTES) {
            readFully(rec, at);
            long chunk = rec.getLong(8);
            ByteBuffer bytes = rec.duplicate().position(GmaFormat.JOURNAL_HEADER_BYTES).slice();
            if (rec.getInt(0) == GmaFormat.JOURNAL_MAGIC && chunk >= 0 && GmaChunk.valid(bytes, chunk)) {
                visitor.visit(chunk, bytes);
            }
        }
    }

    /** Appends a sealed chunk (not yet durable: see {@link #force}). */
    synchronized void append(long chunk, ByteBuffer bytes) {
        header.clear();
        header.putInt(GmaFormat.JOURNAL_MAGIC).putInt(0).putLong(chunk).flip();
        long at = end;
        try {
            write(header, at);
            write(bytes, at + GmaFormat.JOURNAL_HEADER_BYTES);
        } catch (IOException e) {
            throw new GcStoreException(STORE, file, "chunk " + chunk, "write failed: " + e.getMessage(), e);
        }
        end = at + RECORD_BYTES;
        pending.put(chunk, at + GmaFormat.JOURNAL_HEADER_BYTES);
    }

    /** Chunks appended since the last {@link #reset}, each with the offset of its newest copy. */
    synchronized Map<Long, Long> pending() {
        return pending;
    }

    /** Reads the newest journal copy of {@code chunk} into {@code into}; false if none is pending. */
    synchronized boolean readPending(long chunk, ByteBuffer into) {
        Long at = pending.get(chunk);
        if (at == null) {
            return false;
        }
        readChunkAt(at, into);
        return true;
    }

    /** Reads the chunk bytes at {@code at} into {@code into} (its whole capacity). */
    synchronized void readChunkAt(long at, ByteBuffer into) {
        into.clear();
        readFully(into, at);
    }

    synchronized void force() {
        try {
            channel.force(false);
        } catch (IOException e) {
            throw new GcStoreException(STORE, file, null, "fsync failed: " + e.getMessage(), e);
        }
    }

    /**
     * Empties the journal once every pending chunk is durable in place. A truncation lost in a crash
     * only leaves copies that are not newer than the chunks in place, which recovery ignores.
     */
    synchronized void reset() {
        pending.clear();
        try {
            channel.truncate(0);
        } catch (IOException e) {
            throw new GcStoreException(STORE, file, null, "truncate failed: " + e.getMessage(), e);
        }
        end = 0;
    }

    private void write(ByteBuffer b, long at) throws IOException {
        while (b.hasRemaining()) {
            channel.write(b, at + b.position());
        }
    }

    private void readFully(ByteBuffer into, long at) {
        into.clear();
        try {
            while (into.hasRemaining()) {
                if (channel.read(into, at + into.position()) < 0) {
                    throw new GcStoreException(STORE, file, null, "short read at offset " + at, null);
                }
            }
        } catch (IOException e) {
            throw new GcStoreException(STORE, file, null, "read failed: " + e.getMessage(), e);
        }
        into.flip();
    }

    Path file() {
        return file;
    }

    @Override
    public void close() {
        GcMetadataArray.closeChannel(channel, STORE, file);
    }
}
