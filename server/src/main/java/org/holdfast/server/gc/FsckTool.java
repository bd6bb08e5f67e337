package org.holdfast.server.gc;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import org.holdfast.gc.bosc.BoscSettings;
import org.holdfast.gc.check.FsckReport;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.store.DataDirectory;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.MetadataDb;

/**
 * Offline fsck of a stopped server's data directory: {@code FsckTool <data-dir>}. Replays the GC log
 * (and re-drives operations it lacks, as a server start would), then prints the report. Exit code 0:
 * clean; 1: leaks or bookkeeping disagreements; 2: data loss; 3: could not run.
 */
public final class FsckTool {
    private FsckTool() {
    }

    public static void main(String[] args) {
        if (args.length != 1) {
            System.err.println("usage: FsckTool <holdfast data directory> (the server must be stopped)");
            System.exit(3);
        }
        int code;
        try {
            code = run(Path.of(args[0]));
        } catch (RuntimeException e) {
            System.err.println("fsck could not run: " + e.getMessage());
            code = 3;
        }
        System.exit(code);
    }

    /** Runs the check and prints it; returns the exit code. */
    static int run(Path dataDir) {
        if (!java.nio.file.Files.isDirectory(dataDir.resolve("catalog"))) {
            throw new IllegalArgumentException(dataDir + " is not a Holdfast data directory (no catalog/ in it)");
        }
        try (DataDirectory dd = DataDirectory.open(dataDir);
             MetadataDb db = MetadataDb.open(dd.catalogDir());
             DataStore store = DataStore.open(DataStore.Settings.defaults(dd.dataDir()), db)) {
            Catalog catalog = new Catalog(db);
            // no fingerprint index: fsck never frees anything
            try (GcService gc = GcService.open(new GcService.Settings(dd.subdirectory("gc"), BoscSettings.defaults(),
                    Duration.ofHours(24), "30d", 64), catalog, store, null, Clock.systemUTC(), Object::new)) {
                FsckReport f = gc.fsck();
                System.out.print(f.toText());
                return f.dataLoss() ? 2 : f.clean() ? 0 : 1;
            }
        }
    }
}
