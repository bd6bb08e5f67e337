package org.holdfast.server.app;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Callable;
import org.holdfast.server.gc.GcRebuildTool;
import org.holdfast.server.gc.WorkerCountsFile;
import org.holdfast.server.ingest.cluster.WorkerGcImport;
import org.holdfast.server.ingest.cluster.WorkerRangeData;
import org.holdfast.server.store.DataDirectory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The offline import of a worker's GC counts ({@link WorkerGcImport}) exported by its stopped master
 * ({@code gc-rebuild --worker N --out FILE}): {@code holdfast-server worker-gc-import --data-dir D
 * --file FILE [--grace 24h] [--json]}, run on the stopped worker. Progress goes to stderr, the result
 * to stdout. Exit code 0: imported; 2: bad arguments; 3: refused or could not run (nothing swapped
 * in; the message says why; safe to re-run once fixed).
 */
@Command(name = "worker-gc-import", sortOptions = false,
        customSynopsis = "usage: holdfast-server worker-gc-import --data-dir DIR --file FILE [--grace 24h] [--json]",
        description = {"Rebuilds a worker's DIR/range-data/gc from FILE (written on the stopped master by",
            "holdfast-server gc-rebuild --worker N --out FILE). The worker must be stopped.", ""},
        footer = {"", "exit: 0 imported, 2 bad arguments, 3 refused or could not run (nothing swapped in; safe to re-run once fixed)"})
public final class WorkerGcImportTool implements Callable<Integer> {
    @Mixin
    HelpOption help;

    @Mixin
    DataDirOption dataDir;

    @Option(names = "--file", paramLabel = "FILE", required = true, order = 1,
            description = "the counts file the stopped master wrote (gc-rebuild --worker N --out FILE)")
    Path file;

    @Mixin
    GraceOption grace;

    @Mixin
    JsonOption json;

    @Spec
    CommandSpec spec;

    private final ToolConsole console;

    WorkerGcImportTool(ToolConsole console) {
        this.console = console;
    }

    public static void main(String[] args) {
        ServerCli.main(ServerCli.named("worker-gc-import", args));
    }

    /** Runs {@code worker-gc-import} with {@code args} and prints; returns the exit code. */
    static int run(String[] args, PrintStream out, PrintStream err, Clock clock) {
        return ServerCli.run(ServerCli.named("worker-gc-import", args), out, err, clock);
    }

    @Override
    public Integer call() {
        if (grace.grace.isNegative() || grace.grace.isZero()) {
            throw new ParameterException(spec.commandLine(), "--grace must be positive: " + grace.grace);
        }
        return importCounts(dataDir.dataDir, file, grace.grace, json.json, console.out(), console.err(), console.clock());
    }

    private static int importCounts(Path dataDir, Path file, Duration grace, boolean json, PrintStream out, PrintStream err,
                                    Clock clock) {
        if (!Files.isDirectory(dataDir.resolve(WorkerRangeData.DIRECTORY))) {
            err.println("worker-gc-import: " + dataDir + " has no " + WorkerRangeData.DIRECTORY + "/: it is not the data directory"
                    + " of a worker that keeps blocks (holdfast.cluster.data=workers); nothing was changed");
            return 3;
        }
        WorkerGcImport.Report r;
        try (DataDirectory dd = DataDirectory.open(dataDir)) {
            r = new WorkerGcImport(dd.root().resolve(WorkerRangeData.DIRECTORY), grace, clock,
                    line -> err.println("worker-gc-import: " + line)).run(file);
        } catch (WorkerCountsFile.BadCountsFileException e) {
            err.println("worker-gc-import: refused: " + e.getMessage());
            return 3;
        } catch (RuntimeException e) {
            // a failure before the swap leaves range-data/gc as it was; between the two renames, none: both re-run cleanly
            err.println("worker-gc-import: failed (" + e.getMessage() + "); no imported metadata was swapped in; fix the cause"
                    + " and run it again");
            return 3;
        }
        out.println(json ? toJson(r) : toText(r, dataDir));
        return 0;
    }

    static String toText(WorkerGcImport.Report r, Path dataDir) {
        StringBuilder b = new StringBuilder();
        Path rangeData = dataDir.resolve(WorkerRangeData.DIRECTORY);
        b.append("worker-gc-import: rebuilt ").append(rangeData.resolve("gc")).append(" for worker ").append(r.workerId())
                .append(" (PBNs ").append(r.range()).append(") in ").append(r.millis()).append(" ms\n");
        b.append("  records: ").append(r.records()).append(", PBNs handed out below ").append(r.handedOutLimit())
                .append(", unreferenced ones kept for the grace: ").append(r.graced()).append('\n');
        b.append("  GMA chunks written: ").append(r.chunksWritten()).append(", delta mark: ").append(r.mark())
                .append(" (deltas up to it are in the counts)\n");
        b.append("  no unreferenced block is freed before ").append(Instant.ofEpochMilli(r.graceUntil())).append(" (grace)\n");
        if (r.countsLostRemoved()) {
            b.append("  the counts-lost mark went with the replaced directory: sweeps of this worker run again\n");
        }
        if (r.replacedDir() != null) {
            b.append("  the old GC directory was kept as ").append(rangeData.resolve(r.replacedDir()))
                    .append(" (delete it once the worker runs)\n");
        }
        b.append("result: imported");
        return b.toString();
    }

    static String toJson(WorkerGcImport.Report r) {
        return "{\"result\":\"imported\",\"workerId\":" + r.workerId() + ",\"rangeFirst\":" + r.range().first() + ",\"rangeLimit\":"
                + r.range().limit() + ",\"mark\":" + r.mark() + ",\"records\":" + r.records() + ",\"handedOutLimit\":"
                + r.handedOutLimit() + ",\"gracedBlocks\":" + r.graced() + ",\"chunksWritten\":" + r.chunksWritten()
                + ",\"graceUntilMillis\":" + r.graceUntil() + ",\"countsLostRemoved\":" + r.countsLostRemoved() + ",\"replacedDir\":"
                + (r.replacedDir() == null ? "null" : "\"" + GcRebuildTool.jsonEscape(r.replacedDir()) + "\"") + ",\"millis\":"
                + r.millis() + "}";
    }
}
