package org.holdfast.server.ingest.cluster;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * The highest GC delta id a worker has logged and acknowledged, kept beside its GC metadata rather
 * than in it ({@code range-data/gc-acknowledged}, one line of decimal text), so that it outlives a
 * lost {@code range-data/gc}. {@code worker-gc-import} refuses a counts file whose mark is below it:
 * the worker ran after that export and acknowledged deltas the master has since dropped from its
 * outbox, which the file does not count (a later sweep would free blocks of those commits).
 *
 * <p>Best effort, by design: written after each delta is durable in the log, by a write to a
 * temporary file and an atomic rename, without fsync (a delta already costs one). A crash may leave
 * it a little behind the log; it never runs ahead of what was logged.
 */
public final class AcknowledgedDeltaMark {
    /** Its file name, in {@code range-data/}. */
    public static final String FILE = "gc-acknowledged";
    private static final System.Logger LOG = System.getLogger(AcknowledgedDeltaMark.class.getName());

    private final Path file;
    private long written = -1;
    private boolean warned;

    /** The mark of the GC metadata in {@code gcDir} ({@code range-data/gc}): the file sits in its parent. */
    public AcknowledgedDeltaMark(Path gcDir) {
        this.file = gcDir.toAbsolutePath().getParent().resolve(FILE);
    }

    /** Records {@code deltaId} if it is above what was recorded; a failure is logged once, never thrown. */
    public synchronized void record(long deltaId) {
        if (deltaId <= written) {
            return;
        }
        Path tmp = file.resolveSibling(FILE + ".tmp");
        try {
            Files.writeString(tmp, Long.toString(deltaId) + "\n", StandardCharsets.US_ASCII);
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            written = deltaId;
        } catch (IOException e) {
            if (!warned) {
                warned = true;
                LOG.log(System.Logger.Level.WARNING, "cannot record the acknowledged GC delta mark in " + file + " (" + e.getMessage()
                        + "); worker-gc-import cannot then tell a stale counts file from a fresh one: use each file once, right"
                        + " after its export");
            }
        }
    }

    /**
     * The recorded mark in {@code rangeData}, 0 if none was ever recorded.
     *
     * @throws IllegalStateException the file exists but does not hold a mark
     */
    public static long read(Path rangeData) {
        Path f = rangeData.resolve(FILE);
        if (!Files.exists(f)) {
            return 0;
        }
        try {
            return Long.parseLong(Files.readString(f, StandardCharsets.US_ASCII).trim());
        } catch (IOException | NumberFormatException e) {
            throw new IllegalStateException(f + " holds no acknowledged GC delta mark (" + e.getMessage() + "), so a stale counts"
                    + " file cannot be told apart; nothing was changed: if the worker has not run since the export, remove " + f
                    + " and run the import again", e);
        }
    }
}
