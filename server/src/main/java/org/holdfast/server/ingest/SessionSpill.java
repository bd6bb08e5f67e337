package org.holdfast.server.ingest;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;
import org.holdfast.server.catalog.SessionMap;

/**
 * How much per-block state a backup session keeps in memory, and where the rest goes: a session
 * holds at most {@code memoryEntries} unresolved-or-recent entries in its arrays and the same
 * number of finished map entries in its {@link SessionMap}; older finished entries are spilled to
 * a file {@code session-*.spill} in {@code dir} (holdfast.ingest.session-memory-entries,
 * docs/operations.md). The file is deleted when the session commits or is abandoned; files left by
 * a crash are deleted at the next start ({@link #removeLeftovers()}).
 */
public record SessionSpill(Path dir, int memoryEntries) {
    /** Default of holdfast.ingest.session-memory-entries: about 32 MiB of session state per backup. */
    public static final int DEFAULT_MEMORY_ENTRIES = 262_144;
    /** Name suffix of spill files. */
    public static final String SUFFIX = ".spill";
    private static final String PREFIX = "session-";

    public SessionSpill {
        if (dir == null) {
            throw new IllegalArgumentException("session spill directory must not be null");
        }
        if (memoryEntries < 1024) {
            throw new IllegalArgumentException("holdfast.ingest.session-memory-entries must be at least 1024, got " + memoryEntries);
        }
    }

    /** The default size, spilling into the JVM's temporary directory (tests and embedded use). */
    public static SessionSpill inTempDir() {
        return new SessionSpill(Path.of(System.getProperty("java.io.tmpdir")), DEFAULT_MEMORY_ENTRIES);
    }

    /** These settings with another in-memory bound. */
    public SessionSpill withMemoryEntries(int entries) {
        return new SessionSpill(dir, entries);
    }

    /** A new, empty map for session {@code sessionId}; its spill file is created only if it fills its buffer. */
    public SessionMap newMap(long sessionId) {
        String unique = Long.toHexString(ThreadLocalRandom.current().nextLong());
        return new SessionMap(dir.resolve(PREFIX + sessionId + "-" + unique + SUFFIX), memoryEntries);
    }

    /** Deletes spill files of sessions that a crash ended; call before the first session starts. Returns how many. */
    public int removeLeftovers() {
        if (!Files.isDirectory(dir)) {
            return 0;
        }
        int n = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, PREFIX + "*" + SUFFIX)) {
            for (Path f : files) {
                Files.deleteIfExists(f);
                n++;
            }
        } catch (IOException e) {
            throw new UncheckedIOException("could not clean the session spill directory " + dir + ": " + e.getMessage(), e);
        }
        return n;
    }
}
