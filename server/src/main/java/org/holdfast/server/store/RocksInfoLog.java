package org.holdfast.server.store;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.rocksdb.InfoLogLevel;
import org.rocksdb.Logger;

/**
 * RocksDB's info log, sent to the server's log instead of a {@code LOG} file in the catalog: only
 * warnings and worse, prefixed {@code rocksdb:} (one harmless warning demoted, see {@link #levelOf}).
 * The options dump RocksDB writes at every open (its header lines, about 140 KiB for our column
 * families, whatever the level) is dropped, so the catalog holds no log file at rest.
 */
final class RocksInfoLog extends Logger {
    private static final System.Logger LOG = System.getLogger("org.holdfast.server.store.rocksdb");

    RocksInfoLog() {
        super(InfoLogLevel.WARN_LEVEL);
    }

    @Override
    protected void log(InfoLogLevel level, String message) {
        Level to = levelOf(level, message);
        if (to != Level.OFF) {
            LOG.log(to, "rocksdb: {0}", message);
        }
    }

    /**
     * The server log's level for a RocksDB line: warnings stay warnings and errors errors, except two
     * notes RocksDB logs as warnings that are not problems, which go to DEBUG: the tail-prefetch note
     * it logs each time it opens a table file (a sizing guess), and the unverified-unique-ID note of
     * the start's checksum pass ({@code MetadataDb.verifyChecksums} reads each table file outside the
     * manifest, so there is no expected ID to compare; opening the database itself does compare them).
     * {@link Level#OFF}: not kept (the options dump, info, debug).
     */
    static Level levelOf(InfoLogLevel level, String message) {
        return switch (level) {
            case WARN_LEVEL -> isTailPrefetchNote(message) || isUnverifiedIdNote(message) ? Level.DEBUG : Level.WARNING;
            case ERROR_LEVEL, FATAL_LEVEL -> Level.ERROR;
            default -> Level.OFF;
        };
    }

    /** "[file] Tail prefetch size N is calculated based on heuristics" (or "on TailPrefetchStats"). */
    private static boolean isTailPrefetchNote(String message) {
        return message.contains("Tail prefetch size ") && message.contains(" is calculated based on ");
    }

    /** "At least one SST file opened without unique ID to verify: N.sst" (or "Another ~1000 SST files ..."). */
    private static boolean isUnverifiedIdNote(String message) {
        return message.contains("SST file opened without unique ID to verify")
                || message.contains("SST files opened without unique ID to verify");
    }

    /** Deletes the {@code LOG} files a release that let RocksDB write its own info log left in {@code dir}. */
    static void dropOldFiles(Path dir) {
        try (Stream<Path> files = Files.list(dir)) {
            for (Path p : (Iterable<Path>) files::iterator) {
                String name = p.getFileName().toString();
                if (name.equals("LOG") || name.startsWith("LOG.old.")) {
                    Files.deleteIfExists(p);
                }
            }
        } catch (IOException e) {
            LOG.log(Level.WARNING, "cannot delete RocksDB's old info log in " + dir + ": " + e.getMessage()
                    + " (harmless: it only takes space; delete catalog/LOG* by hand)");
        }
    }
}
