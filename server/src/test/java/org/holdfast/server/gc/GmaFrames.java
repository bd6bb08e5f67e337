package org.holdfast.server.gc;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.holdfast.gc.gma.GmaFormat;

/** Finds GMA frames on disk for damage tests (which of a chunk's two frames to rot). */
public final class GmaFrames {
    private GmaFrames() {
    }

    /** The frame (0 or 1) of {@code chunk} whose generation gma.gen records as newest and durable. */
    public static int newestFrame(Path gcDir, long chunk) throws Exception {
        byte[] gen = Files.readAllBytes(gcDir.resolve(GmaFormat.GENERATIONS_FILE));
        int at = GmaFormat.GEN_HEADER_BYTES + (int) chunk * 2;
        if (gen[at] != 1) {
            throw new AssertionError("chunk " + chunk + " is not recorded in gma.gen");
        }
        try (FileChannel ch = FileChannel.open(gcDir.resolve("gma.dat"), StandardOpenOption.READ)) {
            for (int frame = 0; frame < 2; frame++) {
                ByteBuffer h = ByteBuffer.allocate(4);
                ch.read(h, GmaFormat.frameOffset(chunk, frame));
                if (h.get(3) == gen[at + 1]) {
                    return frame;
                }
            }
        }
        throw new AssertionError("no frame of chunk " + chunk + " has the recorded generation " + gen[at + 1]);
    }
}
