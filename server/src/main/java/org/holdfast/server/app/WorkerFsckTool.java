package org.holdfast.server.app;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.holdfast.server.gc.OfflineProperties;
import org.holdfast.server.gc.WorkerCountsFile;
import org.holdfast.server.gc.WorkerFsck;
import org.holdfast.server.gc.WorkerFsckReport;
import org.holdfast.server.ingest.cluster.WorkerRangeData;
import org.holdfast.server.store.DataDirectory;
import org.holdfast.server.store.object.S3Settings;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Unmatched;

/**
 * The offline check of a stopped worker against the counts its stopped master exported
 * ({@link WorkerFsck}): {@code holdfast-server worker-fsck --data-dir D --counts FILE
 * [--scratch-dir DIR] [--json] [--holdfast.store.s3.NAME=VALUE ...]}. Progress goes to stderr, the
 * report to stdout. Writes nothing in the data directory, nor in the bucket of a worker whose range
 * store archives to one (its {@code holdfast.store.*} settings, read as the offline fsck reads them,
 * let it read the logs that are in the bucket only). Exit codes ({@link WorkerFsckReport}): 0 clean (leaks allowed), 1 bookkeeping
 * errors, 2 data loss, 3 could not run or refused (bad arguments, bad file, another worker's file,
 * a running worker, an archiving worker without its bucket settings or with a bucket that cannot be read), 4 no data loss, but the worker's GC log mark does not allow comparing its counts
 * with the file's (behind the master's routed mark, or above the file's: the advice says which and what to do).
 */
@Command(name = "worker-fsck", sortOptions = false, exitCodeOnInvalidInput = WorkerFsckReport.EXIT_COULD_NOT_RUN,
        customSynopsis = {"usage: holdfast-server worker-fsck --data-dir DIR --counts FILE [--scratch-dir DIR] [--json]",
            "           [--holdfast.store.NAME=VALUE ...]"},
        description = {"Checks a worker's DIR/range-data (blocks and GC metadata) against FILE (written on the stopped master by",
            "holdfast-server gc-rebuild --worker N --out FILE), writing nothing in DIR. The worker must be stopped.",
            "A worker with backend s3 needs its --holdfast.store.* settings (or system properties, or HOLDFAST_STORE_*",
            "environment variables): logs not on its disk are read from the bucket, which is only read.", ""},
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

    /** The worker's --holdfast.NAME=VALUE settings (ServerSettings checks that nothing else is among them). */
    @Unmatched
    List<String> settings = new ArrayList<>();

    @Spec
    CommandSpec spec;

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
        // a stray argument is a usage error, before anything is opened
        OfflineProperties properties = ServerSettings.of(settings, spec);
        S3Settings s3;
        try {
            s3 = S3Settings.fromProperties(properties);
        } catch (RuntimeException e) {
            console.err().println("worker-fsck could not run: " + e.getMessage());
            return WorkerFsckReport.EXIT_COULD_NOT_RUN;
        }
        return check(dataDir.dataDir, counts, scratch.scratchDir(), s3, json.json, console.out(), console.err(),
                console.progressEvery());
    }

    private static int check(Path dataDir, Path file, Path scratch, S3Settings s3, boolean json, PrintStream out, PrintStream err,
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
                    line -> err.println("worker-fsck: " + line), s3).run(file);
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
