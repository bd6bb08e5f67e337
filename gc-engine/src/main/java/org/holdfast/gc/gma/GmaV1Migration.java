package org.holdfast.gc.gma;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import org.holdfast.gc.GcCorruptException;
import org.holdfast.gc.GcStoreException;

/**
 * Converts a GMA file of format 1 (two frames per chunk) to format 2 (one chunk each) at open: each
 * chunk's newest valid frame, picked by the format-1 rules, is written to {@code gma.dat.v2.tmp},
 * which is forced and renamed over {@code gma.dat}. A crash before the rename leaves format 1 as it
 * was (the next open starts again); after it, format 2. Generations are kept, so {@code gma.gen}
 * stays right.
 */
final class GmaV1Migration {
    private static final String STORE = "gma";

    private GmaV1Migration() {
    }

    /** True if any chunk-aligned header of {@code ch} carries the format-1 magic. */
    static boolean isV1(FileChannel ch) throws IOException {
        ByteBuffer magic = ByteBuffer.allocate(4);
        long size = ch.size();
        for (long at = 0; at + 4 <= size; at += GmaFormat.CHUNK_BYTES) {
            magic.clear();
            while (magic.hasRemaining() && ch.read(magic, at + magic.position()) >= 0) {
                // read the 4 bytes
            }
            if ((magic.getInt(0) & GmaFormat.MAGIC_MASK) == GmaFormat.MAGIC_V1) {
                return true;
            }
        }
        return false;
    }

    /** Rewrites {@code file} (format 1, open as {@code v1}) as format 2, returning its chunk count; {@code v1} is left to the caller to close. */
    static long convert(Path file, FileChannel v1, GenerationTable generations) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".v2.tmp");
        long frameBytes = (long) GmaFormat.CHUNK_BYTES * GmaFormat.V1_FRAMES_PER_CHUNK;
        long chunks = (v1.size() + frameBytes - 1) / frameBytes;
        ByteBuffer pair = ByteBuffer.allocate((int) frameBytes);
        try (FileChannel out = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            for (long c = 0; c < chunks; c++) {
                pair.clear();
                long pos = GmaFormat.v1FrameOffset(c, 0);
                while (pair.hasRemaining() && v1.read(pair, pos + pair.position()) >= 0) {
                    // read both frames; a short read is a frame never written
                }
                while (pair.hasRemaining()) {
                    pair.put((byte) 0);
                }
                ByteBuffer chunk = pick(file, generations, c, pair);
                chunk.clear();
                long at = GmaFormat.chunkOffset(c);
                while (chunk.hasRemaining()) {
                    out.write(chunk, at + chunk.position());
                }
            }
            out.force(true);
        }
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        try (FileChannel d = FileChannel.open(file.getParent(), StandardOpenOption.READ)) {
            d.force(true);
        } catch (IOException ignored) {
            // some file systems cannot fsync a directory; the rename is still atomic
        }
        return chunks;
    }

    /** Removes a conversion a crash cut short. */
    static void dropLeftover(Path file) {
        Path tmp = file.resolveSibling(file.getFileName() + ".v2.tmp");
        try {
            Files.deleteIfExists(tmp);
        } catch (IOException e) {
            throw new GcStoreException(STORE, tmp, null, "cannot delete: " + e.getMessage(), e);
        }
    }

    /** The format-2 bytes of chunk {@code c} from its two format-1 frames (all zero if never written). */
    private static ByteBuffer pick(Path file, GenerationTable generations, long c, ByteBuffer pair) {
        ByteBuffer a = pair.duplicate().position(0).limit(GmaFormat.CHUNK_BYTES).slice();
        ByteBuffer b = pair.duplicate().position(GmaFormat.CHUNK_BYTES).limit(2 * GmaFormat.CHUNK_BYTES).slice();
        boolean aOk = GmaChunk.valid(a, c, GmaFormat.MAGIC_V1);
        boolean bOk = GmaChunk.valid(b, c, GmaFormat.MAGIC_V1);
        int recorded = generations.recorded(c);
        ByteBuffer picked;
        if (aOk && bOk) {
            long la = GmaChunk.headerLsn(a);
            long lb = GmaChunk.headerLsn(b);
            boolean bNewer = la != lb ? lb > la : GmaChunk.generation(b) == ((GmaChunk.generation(a) + 1) & 0xFF);
            picked = bNewer ? b : a;
        } else if (aOk || bOk) {
            picked = aOk ? a : b;
            if (GenerationTable.behind(GmaChunk.generation(picked), recorded)) {
                throw new GcCorruptException(STORE, file, "chunk " + c, "its newest frame (generation " + recorded
                        + ", durable by " + generations.file().getFileName() + ") fails its checksum, and the other frame is "
                        + "an older version (generation " + GmaChunk.generation(picked) + "): the updates only the damaged frame held are lost");
            }
        } else if (GcMetadataArray.allZero(a) && GcMetadataArray.allZero(b)) {
            if (recorded >= 0) {
                throw new GcCorruptException(STORE, file, "chunk " + c, "both frames read as zeros, but "
                        + generations.file().getFileName() + " records generation " + recorded + " as durable");
            }
            return a;
        } else {
            throw new GcCorruptException(STORE, file, "chunk " + c, "both frames fail their checksum");
        }
        picked.putInt(0, GmaFormat.MAGIC_V2 | GmaChunk.generation(picked)); // the magic is outside the checksum
        return picked;
    }
}
