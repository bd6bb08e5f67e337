package org.holdfast.server.app;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.Callable;
import org.holdfast.server.gc.WorkerCountsFile;
import org.holdfast.server.gc.WorkerFsck;
import org.holdfast.server.gc.WorkerFsckReport;
import org.holdfast.server.ingest.cluster.WorkerRangeData;
import org.holdfast.server.store.DataDirectory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The offline check of a stopped worker against the counts its stopped master exported
 * ({@link WorkerFsck}): {@code holdfast-server worker-fsck --data-dir D --counts FILE
 * [--scratch-dir DIR] [--json]}. Progress goes to stderr, the report to stdout. Writes nothing in
 * the data directory. Exit codes ({@link WorkerFsckReport}): 0 clean (leaks allowed), 1 bookkeeping
 * errors, 2 data loss, 3 could not run or refused (bad arguments, bad file, another worker's file,
 * a running worker), 4 no data loss, but the worker's GC log mark does not allow comparing its counts
 * with the file's (behind the master's routed mark, or above the file's: the advice says which and what to do).
 */
@Command(name = "worker-fsck", sortOptions = false, exitCodeOnInvalidInput = WorkerFsckReport.EXIT_COULD_NOT_RUN,
        customSynopsis = "usage: holdfast-server worker-fsck --data-dir DIR --counts FILE [--scratch-dir DIR] [--json]",
        description = {"Checks a worker's DIR/range-data (blocks and GC metadata) against FILE (written on the stopped master by",
            "holdfast-server gc-rebuild --worker N --out FILE), writing nothing in DIR. The worker must be stopped.", ""},
        footer = {"", "exit: 0 clean, 1 counts disagree or are marked counts-lost, 2 data loss, 3 could not run (or bad arguments),"
                + " 4 counts not compared (the worker's mark does not allow it; the report says why)"})
public final class WorkerFsckTool implements Callable<Integer> {
    @Mixin
    HelpOption help;

    @Mixin
    DataDirOption dataDir;

    @Option(names = "--counts", paramLabel = "FILE", required = true, order = 1,
            description = "the counts file the stopped master wrote (gc-rebuild --worker N --out FILE)")
    Path counts;

    @Mixin
    ScratchDirOption scratch;

    @Mixin
    JsonOption json;

    private final ToolConsole console;

    WorkerFsckTool(ToolConsole console) {
        this.console = console;
    }

    public static void main(String[] args) {
        ServerCli.main(ServerCli.named("worker-fsck", args));
    }

    /** Runs {@code worker-fsck} with {@code args} and prints; returns the exit code. */
    static int run(String[] args, PrintStream out, PrintStream err, Duration progressEvery) {
        return ServerCli.run(ServerCli.named("worker-fsck", args), new ToolConsole(out, err, Clock.systemUTC(), progressEvery));
    }

    @Override
    public Integer call() {
        return check(dataDir.dataDir, counts, scratch.scratchDir(), json.json, console.out(), console.err(), console.progressEvery());
    }

    private static int check(Path dataDir, Path file, Path scratch, boolean json, PrintStream out, PrintStream err,
                             Duration progressEvery) {
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
}
