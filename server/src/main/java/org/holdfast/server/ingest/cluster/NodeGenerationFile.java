package org.holdfast.server.ingest.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import org.holdfast.common.io.DurableReplace;

/**
 * The node generation a worker's range data holds ({@code range-data/node-generation}; cluster version
 * 7): what the master issued at its last registration, presented at the next REGISTER so that the
 * master can refuse an older copy of the directory (docs/architecture.md "Node generation"). 13 bytes:
 * magic {@code HFNG}, u8 version 1, u64 generation (big-endian, ≥ 1). Written synced (a temporary file,
 * fsync, atomic rename, fsync of the directory) before the worker serves the registration.
 */
public final class NodeGenerationFile {
    /** Its file name, in {@code range-data/}. */
    public static final String FILE = "node-generation";
    private static final int MAGIC = 0x48464e47; // "HFNG"
    private static final int VERSION = 1;
    private static final int BYTES = 4 + 1 + 8;

    private NodeGenerationFile() {
    }

    /**
     * The generation held in {@code rangeData}, 0 if none (a fresh directory, or one from before generations).
     *
     * @throws IllegalStateException if the file exists but does not read; the worker then does not register
     */
    public static long read(Path rangeData) {
        Path f = rangeData.resolve(FILE);
        byte[] b;
        try {
            b = Files.readAllBytes(f);
        } catch (NoSuchFileException e) {
            return 0;
        } catch (IOException e) {
            throw new IllegalStateException("cannot read the node generation " + f + " (" + e.getMessage() + "); this worker does not"
                    + " register until it reads: check the disk", e);
        }
        ByteBuffer v = ByteBuffer.wrap(b);
        String why = b.length != BYTES ? b.length + " bytes (expected " + BYTES + ")" : v.getInt(0) != MAGIC ? "no HFNG magic"
                : (b[4] & 0xff) != VERSION ? "version " + (b[4] & 0xff) + " (this build reads " + VERSION + ")"
                : v.getLong(5) < 1 ? "generation " + v.getLong(5) : null;
        if (why != null) {
            throw new IllegalStateException("the node generation " + f + " does not read: " + why + "; this worker does not register"
                    + " with it: if this node's range data is the one to keep, delete the file and start the worker again"
                    + " (docs/operations.md \"A cloned disk\")");
        }
        return v.getLong(5);
    }

    /** Stores {@code generation} in {@code rangeData} synced, replacing what it held (creates the directory if needed). */
    public static void write(Path rangeData, long generation) {
        if (generation < 1) {
            throw new IllegalArgumentException("a node generation is 1 or more, got " + generation);
        }
        Path f = rangeData.resolve(FILE);
        try {
            DurableReplace.write(rangeData, FILE, ByteBuffer.allocate(BYTES).putInt(MAGIC).put((byte) VERSION).putLong(generation).flip());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot store the node generation " + generation + " in " + f + " (" + e.getMessage() + ")", e);
        }
    }
}
