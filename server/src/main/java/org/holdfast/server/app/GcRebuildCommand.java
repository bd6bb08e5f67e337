package org.holdfast.server.app;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import org.holdfast.server.gc.CountsFenceRelease;
import org.holdfast.server.gc.GcMetadataRebuild;
import org.holdfast.server.gc.GcRebuildTool;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine.TypeConversionException;

/**
 * {@code gc-rebuild}: the command line of {@link GcRebuildTool}, the offline rebuild of a stopped
 * server's GC metadata, or with {@code --worker N --out FILE} the export of a worker's counts.
 */
@Command(name = "gc-rebuild", sortOptions = false,
        customSynopsis = {"usage: holdfast-server gc-rebuild --data-dir DIR [--grace 24h] [--pass-chunks 512] [--json]",
            "       holdfast-server gc-rebuild --data-dir DIR --worker N --out FILE [--pass-chunks 512] [--json]",
            "       holdfast-server gc-rebuild --data-dir DIR --worker N --counts-imported FILE"},
        description = {"Rebuilds DIR/gc (GC metadata) from the catalog. The server must be stopped.",
            "With --worker and --out, on a stopped master with holdfast.cluster.data=workers: writes worker N's GC counts to",
            "FILE, for holdfast-server worker-gc-import on that worker (stopped) after its range-data/gc was lost.",
            "With --worker and --counts-imported, after a catalog-restore of such a master: lifts worker N's counts fence",
            "once FILE, exported from the restored catalog, was imported on it (until then the worker is never swept); for",
            "a worker before cluster protocol version 7 (a newer one lifts its fence by registering after the import).", ""},
        footer = {"", "exit: 0 rebuilt (or exported), 2 bad arguments, 3 could not run (nothing swapped in; safe to re-run)"})
final class GcRebuildCommand implements Callable<Integer> {
    @Mixin
    HelpOption help;

    @Mixin
    DataDirOption dataDir;

    @Mixin
    GraceOption grace;

    @Option(names = "--pass-chunks", paramLabel = "N", defaultValue = "512", order = 20,
            description = "GMA chunks (8191 blocks, about 140 KiB of memory each) rebuilt per pass (default: ${DEFAULT-VALUE})")
    int passChunks;

    @Option(names = "--worker", paramLabel = "N", converter = WorkerIdConverter.class, order = 30,
            description = "export this worker's counts instead (its id: GET /api/v1/cluster/workers); needs --out")
    Long worker;

    @Option(names = "--out", paramLabel = "FILE", order = 31, description = "the counts file to write; needs --worker")
    Path out;

    @Option(names = "--counts-imported", paramLabel = "FILE", order = 32,
            description = "after a catalog-restore: lift worker N's counts fence; FILE is the counts file imported on it")
    Path imported;

    @Mixin
    JsonOption json;

    @Spec
    CommandSpec spec;

    private final ToolConsole console;

    GcRebuildCommand(ToolConsole console) {
        this.console = console;
    }

    @Override
    public Integer call() {
        if (imported != null) {
            if (worker == null || out != null) {
                throw new ParameterException(spec.commandLine(), "--counts-imported needs --worker and goes without --out");
            }
            return CountsFenceRelease.run(dataDir.dataDir, worker, imported, console.out(), console.err());
        }
        if ((worker == null) != (out == null)) {
            throw new ParameterException(spec.commandLine(), "--worker and --out go together (export a worker's counts to a file)");
        }
        GcMetadataRebuild.Settings settings;
        try {
            settings = new GcMetadataRebuild.Settings(grace.grace, passChunks);
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
        if (worker != null) {
            return GcRebuildTool.exportWorker(dataDir.dataDir, worker, out, passChunks, json.json, console.out(), console.err(),
                    console.clock());
        }
        return GcRebuildTool.rebuild(dataDir.dataDir, settings, json.json, console.out(), console.err(), console.clock());
    }

    /** A worker id as the cluster API lists it: 1, 2, ... */
    static final class WorkerIdConverter implements ITypeConverter<Long> {
        @Override
        public Long convert(String value) {
            try {
                long id = Long.parseLong(value.trim());
                if (id >= 1) {
                    return id;
                }
            } catch (NumberFormatException e) {
                // reported below
            }
            throw new TypeConversionException("not a worker id (1, 2, ...: GET /api/v1/cluster/workers): '" + value + "'");
        }
    }
}
