package org.holdfast.gc.gma;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import org.holdfast.gc.GcCorruptException;
import org.holdfast.gc.GcStoreException;

/**
 * Per GMA chunk, the write generation of its newest <em>durable</em> version, in {@code gma.gen}
 * (layout in {@link GmaFormat}). Why: a chunk that fails its checksum may be mended from another
 * copy (the double-write journal, or in format 1 the other frame) only if that copy is not older
 * than the newest durable version, whose updates may lie below the checkpoint, where no log replay
 * brings them back. A torn write can only hit a version that was never recorded here, because an
 * entry is written only after the GMA file is forced; so a copy older than the recorded generation
 * is refused as damage instead of silently counted on.
 *
 * <p>Writers note each chunk write ({@link #written}); {@link #takeUnrecorded} and
 * {@link #record} bracket the GMA's fsync. All state is guarded by {@code this}. Owns its channel.
 */
final class GenerationTable implements AutoCloseable {
    private static final String STORE = "gma-generations";

    private final Path file;
    private final FileChannel channel;
    /** 2 bytes per chunk, as on disk after the header. */
    private byte[] entries;
    private final Map<Long, Integer> unrecorded = new HashMap<>();

    private GenerationTable(Path file, FileChannel channel, byte[] entries) {
        this.file = file;
        this.channel = channel;
        this.entries = entries;
    }

    /** Opens (creating if needed) {@code dir/gma.gen}; a store from before it starts with every chunk unknown. */
    static GenerationTable open(Path dir) {
        Path file = dir.resolve(GmaFormat.GENERATIONS_FILE);
        try {
            FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
            try {
                long size = ch.size();
                if (size == 0) {
                    ByteBuffer h = ByteBuffer.allocate(GmaFormat.GEN_HEADER_BYTES);
                    h.putInt(0, GmaFormat.GEN_MAGIC_V1);
                    ch.write(h, 0);
                    ch.force(true);
                    return new GenerationTable(file, ch, new byte[0]);
                }
                if (size < GmaFormat.GEN_HEADER_BYTES || size > Integer.MAX_VALUE) {
                    throw new GcCorruptException(STORE, file, null, "file of " + size + " bytes is not a generation table");
                }
                ByteBuffer all = ByteBuffer.allocate((int) size);
                while (all.hasRemaining() && ch.read(all, all.position()) >= 0) {
                    // read to the end
                }
                if (all.getInt(0) != GmaFormat.GEN_MAGIC_V1) {
                    throw new GcCorruptException(STORE, file, null, "bad header " + Integer.toHexString(all.getInt(0)));
                }
                // an odd last byte is the half of an entry whose write was cut: it was not recorded
                int n = (int) ((size - GmaFormat.GEN_HEADER_BYTES) / 2 * 2);
                return new GenerationTable(file, ch, Arrays.copyOfRange(all.array(), GmaFormat.GEN_HEADER_BYTES,
                        GmaFormat.GEN_HEADER_BYTES + n));
            } catch (IOException | RuntimeException e) {
                ch.close();
                throw e;
            }
        } catch (IOException e) {
            throw new GcStoreException(STORE, file, null, "cannot open: " + e.getMessage(), e);
        }
    }

    Path file() {
        return file;
    }

    /** The generation of chunk {@code chunk}'s newest durable frame, or -1 if not recorded. */
    synchronized int recorded(long chunk) {
        long at = chunk * 2;
        if (at + 1 >= entries.length || entries[(int) at] != GmaFormat.GEN_RECORDED) {
            return -1;
        }
        return entries[(int) at + 1] & 0xFF;
    }

    /**
     * True if a surviving copy of generation {@code survivor} is older than the generation
     * {@code recorded} as durable (-1: none recorded, a store from before the table or a chunk whose
     * first write was never forced): the newest durable version is then lost.
     */
    static boolean behind(int survivor, int recorded) {
        if (recorded < 0) {
            return false;
        }
        int behind = (recorded - survivor) & 0xFF;
        return behind != 0 && behind < 128;
    }

    /** Chunk {@code chunk} was written with generation {@code generation}; not durable yet. */
    synchronized void written(long chunk, int generation) {
        unrecorded.put(chunk, generation);
    }

    /** The writes noted so far; take them before forcing the GMA, record them after. */
    synchronized Map<Long, Integer> takeUnrecorded() {
        if (unrecorded.isEmpty()) {
            return Map.of();
        }
        Map<Long, Integer> out = new HashMap<>(unrecorded);
        unrecorded.clear();
        return out;
    }

    /** Writes and forces the entries of writes that are now durable in the GMA file. */
    synchronized void record(Map<Long, Integer> durable) {
        if (durable.isEmpty()) {
            return;
        }
        try {
            ByteBuffer e = ByteBuffer.allocate(2);
            for (Map.Entry<Long, Integer> w : durable.entrySet()) {
                long chunk = w.getKey();
                e.clear();
                e.put(0, GmaFormat.GEN_RECORDED).put(1, (byte) (int) w.getValue());
                while (e.hasRemaining()) {
                    channel.write(e, GmaFormat.GEN_HEADER_BYTES + chunk * 2 + e.position());
                }
                int at = (int) (chunk * 2);
                if (at + 2 > entries.length) {
                    entries = Arrays.copyOf(entries, Math.max(at + 2, entries.length * 2));
                }
                entries[at] = GmaFormat.GEN_RECORDED;
                entries[at + 1] = (byte) (int) w.getValue();
            }
            channel.force(false);
        } catch (IOException ex) {
            // the entries stay unrecorded: a later sync records them (the frames are durable either way)
            durable.forEach(unrecorded::putIfAbsent);
            throw new GcStoreException(STORE, file, null, "write failed: " + ex.getMessage(), ex);
        }
    }

    @Override
    public void close() {
        GcMetadataArray.closeChannel(channel, STORE, file);
    }
}
