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
 * warnings and worse, prefixed {@code rocksdb:}. The options dump RocksDB writes at every open (its
 * header lines, about 140 KiB for our column families, whatever the level) is dropped, so the
 * catalog holds no log file at rest.
 */
final class RocksInfoLog extends Logger {
    private static final System.Logger LOG = System.getLogger("org.holdfast.server.store.rocksdb");

    RocksInfoLog() {
        super(InfoLogLevel.WARN_LEVEL);
    }

    @Override
    protected void log(InfoLogLevel level, String message) {
        switch (level) {
            case WARN_LEVEL -> LOG.log(Level.WARNING, "rocksdb: {0}", message);
            case ERROR_LEVEL, FATAL_LEVEL -> LOG.log(Level.ERROR, "rocksdb: {0}", message);
            default -> {
                // header (the options dump), info and debug lines: not kept
            }
        }
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
