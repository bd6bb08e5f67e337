package org.holdfast.server.app;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.holdfast.server.gc.WorkerCountsFile;
import org.holdfast.server.gc.WorkerFsck;
import org.holdfast.server.gc.WorkerFsckReport;
import org.holdfast.server.ingest.cluster.WorkerRangeData;
import org.holdfast.server.store.DataDirectory;

/**
 * The offline check of a stopped worker against the counts its stopped master exported
 * ({@link WorkerFsck}): {@code holdfast-server worker-fsck --data-dir D --counts FILE
 * [--scratch-dir DIR] [--json]}. Progress goes to stderr, the report to stdout. Writes nothing in
 * the data directory. Exit codes ({@link WorkerFsckReport}): 0 clean (leaks allowed), 1 bookkeeping
 * errors, 2 data loss, 3 could not run or refused (bad arguments, bad file, another worker's file,
 * a running worker), 4 no data loss but the marks differ, so the counts were not compared.
 */
public final class WorkerFsckTool {
    static final String USAGE = """
            usage: holdfast-server worker-fsck --data-dir DIR --counts FILE [--scratch-dir DIR] [--json]
              Checks a worker's DIR/range-data (blocks and GC metadata) against FILE (written on the stopped
              master by holdfast-server gc-rebuild --worker N --out FILE), writing nothing in DIR. The worker
              must be stopped.
              --scratch-dir  where the private copy of the range store's catalog and GC metadata goes (default: the temp dir)
              --json         print the report as one JSON object
              exit: 0 clean, 1 counts disagree, 2 data loss, 3 could not run, 4 marks differ (counts not compared)""";
    private static final Duration PROGRESS_EVERY = Duration.ofSeconds(5);

    private WorkerFsckTool() {
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err, PROGRESS_EVERY));
    }

    /** Parses {@code args}, runs the check and prints; returns the exit code. */
    static int run(String[] args, PrintStream out, PrintStream err, Duration progressEvery) {
        Path dataDir = null;
        Path file = null;
        Path scratch = Path.of(System.getProperty("java.io.tmpdir"));
        boolean json = false;
        try {
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                    case "--data-dir" -> dataDir = Path.of(value(args, ++i, "--data-dir"));
                    case "--counts" -> file = Path.of(value(args, ++i, "--counts"));
                    case "--scratch-dir" -> scratch = Path.of(value(args, ++i, "--scratch-dir"));
                    case "--json" -> json = true;
                    case "-h", "--help" -> {
                        out.println(USAGE);
                        return 0;
                    }
                    default -> throw new IllegalArgumentException("unknown argument '" + args[i] + "'");
                }
            }
            if (dataDir == null || file == null) {
                throw new IllegalArgumentException("--data-dir and --counts are required");
            }
        } catch (IllegalArgumentException e) {
            err.println("worker-fsck: " + e.getMessage());
            err.println(USAGE);
            return WorkerFsckReport.EXIT_COULD_NOT_RUN;
        }
        if (!Files.isDirectory(dataDir.resolve(WorkerRangeData.DIRECTORY))) {
            err.println("worker-fsck: " + dataDir + " has no " + WorkerRangeData.DIRECTORY + "/: it is not the data directory of a"
                    + " worker that keeps blocks (holdfast.cluster.data=workers)");
            return WorkerFsckReport.EXIT_COULD_NOT_RUN;
        }
        WorkerFsckReport r;
        // the shared lock: refused while the worker runs, and it cannot start until the check ends
        try (DataDirectory dd = DataDirectory.openReadOnly(dataDir)) {
            r = new WorkerFsck(dd.root().resolve(WorkerRangeData.DIRECTORY), scratch, progressEvery,
                    line -> err.println("worker-fsck: " + line)).run(file);
        } catch (WorkerCountsFile.BadCountsFileException e) {
            err.println("worker-fsck: refused: " + e.getMessage().replace("nothing was changed: ", ""));
            return WorkerFsckReport.EXIT_COULD_NOT_RUN;
        } catch (RuntimeException e) {
            err.println("worker-fsck could not run: " + e.getMessage());
            return WorkerFsckReport.EXIT_COULD_NOT_RUN;
        }
        out.print(json ? r.toJson() + "\n" : r.toText());
        return r.exitCode();
    }

    private static String value(String[] args, int i, String name) {
        if (i >= args.length) {
            throw new IllegalArgumentException(name + " needs a value");
        }
        return args[i];
    }
}
