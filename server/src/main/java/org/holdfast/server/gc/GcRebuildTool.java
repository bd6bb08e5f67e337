package org.holdfast.server.gc;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.store.DataDirectory;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.MetadataDb;

/**
 * Offline rebuild of a stopped server's GC metadata from its catalog ({@link GcMetadataRebuild}):
 * {@code holdfast-server gc-rebuild --data-dir D [--grace 24h] [--json]}; on a stopped master with
 * its blocks on workers, {@code --worker N --out FILE} exports worker N's counts instead
 * ({@link WorkerGcExport}; the worker imports them with {@code worker-gc-import}). Progress goes to stderr,
 * the result to stdout (text, or one JSON object with {@code --json}). Exit code 0: rebuilt and
 * swapped in; 2: bad arguments (the command line, server/app's GcRebuildCommand); 3: could not run
 * (no rebuilt metadata swapped in; safe to re-run).
 */
public final class GcRebuildTool {
    private GcRebuildTool() {
    }

    /**
     * Rebuilds {@code dataDir}/gc from the catalog and prints the result; returns the exit code
     * (0 rebuilt, 3 could not run: not a data directory, a master whose blocks are on workers, a failure).
     */
    public static int rebuild(Path dataDir, GcMetadataRebuild.Settings settings, boolean json, PrintStream out, PrintStream err,
                              Clock clock) {
        if (!isDataDirectory(dataDir, err)) {
            return 3;
        }
        GcMetadataRebuild.Report r;
        try (DataDirectory dd = DataDirectory.open(dataDir);
             MetadataDb db = MetadataDb.open(dd.catalogDir())) {
            if (db.metaLong(FormatVersions.META_CLUSTER_DATA_MODE, 0) == FormatVersions.CLUSTER_DATA_ON_WORKERS) {
                err.println("gc-rebuild: this master keeps its blocks on its workers (holdfast.cluster.data=workers), and a rebuild"
                        + " of its own gc/ is not supported; nothing was changed. To rebuild a worker's lost GC metadata run"
                        + " gc-rebuild --data-dir " + dataDir + " --worker N --out FILE here (master stopped), then"
                        + " worker-gc-import --data-dir <worker data dir> --file FILE on the stopped worker (docs/operations.md)");
                return 3;
            }
            GcMetadataRebuild rebuild = new GcMetadataRebuild(dd.root(), new Catalog(db), settings, clock,
                    line -> err.println("gc-rebuild: " + line));
            r = rebuild.run();
        } catch (RuntimeException e) {
            // a failure before the swap leaves gc/ as it was; one between the two renames leaves no gc/: both re-run cleanly
            err.println("gc-rebuild: failed (" + e.getMessage() + "); no rebuilt metadata was swapped in; fix the cause and run it again");
            return 3;
        }
        out.println(json ? toJson(r) : toText(r, dataDir));
        return 0;
    }

    /**
     * On a stopped master whose blocks are on workers: writes worker {@code worker}'s GC counts to
     * {@code outFile} and prints the result; returns the exit code (0 exported, 3 could not run).
     */
    public static int exportWorker(Path dataDir, long worker, Path outFile, int passChunks, boolean json, PrintStream out,
                                   PrintStream err, Clock clock) {
        if (!isDataDirectory(dataDir, err)) {
            return 3;
        }
        WorkerGcExport.Report r;
        try (DataDirectory dd = DataDirectory.open(dataDir);
             MetadataDb db = MetadataDb.open(dd.catalogDir())) {
            r = new WorkerGcExport(new Catalog(db), passChunks, clock, line -> err.println("gc-rebuild: " + line)).run(worker, outFile);
        } catch (RuntimeException e) {
            err.println("gc-rebuild: failed (" + e.getMessage() + "); no counts file was written; fix the cause and run it again");
            return 3;
        }
        out.println(json ? toJson(r, outFile) : toText(r, outFile));
        return 0;
    }

    static String toText(WorkerGcExport.Report r, Path outFile) {
        return "gc-rebuild: exported the GC counts of worker " + r.workerId() + " ('" + r.nodeName() + "', PBNs " + r.range() + ") to "
                + outFile + " in " + r.millis() + " ms\n"
                + "  volumes: " + r.volumes() + ", retained snapshots: " + r.snapshots() + ", map entries: " + r.mapEntries()
                + ", passes: " + r.passes() + "\n"
                + "  referenced blocks: " + r.records() + " (pinned: " + r.pinnedPbns() + "), file: " + r.bytes() + " bytes\n"
                + "  delta mark: " + r.mark() + " (deltas up to it are in the counts; later ones are applied after the import)\n"
                + "  routed mark: " + (r.routed().unknownWhy() == null ? r.routed().mark() + " (" + r.routed().outboxEntries()
                + " not yet acknowledged; worker-fsck compares counts once the worker logged up to it)" : "unknown: "
                + r.routed().unknownWhy() + " (worker-fsck then compares counts only right after an import)") + "\n"
                + "  next: copy the file to the worker and, with the worker stopped, run holdfast-server worker-gc-import"
                + " --data-dir <worker data dir> --file <file>\n"
                + "result: exported";
    }

    static String toJson(WorkerGcExport.Report r, Path outFile) {
        return "{\"result\":\"exported\",\"workerId\":" + r.workerId() + ",\"node\":\"" + jsonEscape(r.nodeName())
                + "\",\"rangeFirst\":" + r.range().first() + ",\"rangeLimit\":" + r.range().limit() + ",\"mark\":" + r.mark()
                + ",\"routedMark\":" + (r.routed().unknownWhy() == null ? r.routed().mark() : "null") + ",\"outboxEntries\":" + r.routed().outboxEntries()
                + ",\"records\":" + r.records() + ",\"pinnedBlocks\":" + r.pinnedPbns() + ",\"volumes\":" + r.volumes()
                + ",\"snapshots\":" + r.snapshots() + ",\"mapEntries\":" + r.mapEntries() + ",\"passes\":" + r.passes()
                + ",\"file\":\"" + jsonEscape(outFile.toString()) + "\",\"bytes\":" + r.bytes() + ",\"millis\":" + r.millis() + "}";
    }

    static boolean isDataDirectory(Path dataDir, PrintStream err) {
        if (Files.isDirectory(dataDir.resolve("catalog"))) {
            return true;
        }
        err.println("gc-rebuild: " + dataDir + " is not a Holdfast data directory (no catalog/ in it); give the server's holdfast.data-dir");
        return false;
    }

    static String toText(GcMetadataRebuild.Report r, Path dataDir) {
        StringBuilder b = new StringBuilder();
        b.append("gc-rebuild: rebuilt ").append(dataDir.resolve("gc")).append(" in ").append(r.millis()).append(" ms\n");
        b.append("  volumes: ").append(r.volumes()).append(", retained snapshots: ").append(r.snapshots())
                .append(", map entries: ").append(r.mapEntries()).append(", passes: ").append(r.passes()).append('\n');
        b.append("  referenced blocks: ").append(r.referencedPbns()).append(" (pinned: ").append(r.pinnedPbns()).append(")\n");
        b.append("  stored blocks: ").append(r.storedPbns()).append(", of which referenced by nothing: ")
                .append(r.unreferencedStored()).append('\n');
        b.append("  GMA chunks written: ").append(r.chunksWritten()).append(", operations accounted: ").append(r.lastOpId()).append('\n');
        b.append("  no unreferenced block is freed before ").append(Instant.ofEpochMilli(r.graceUntil())).append(" (grace)\n");
        if (r.referencedMissing() > 0) {
            b.append("  WARNING: ").append(r.referencedMissing())
                    .append(" referenced blocks are not in the data store (data loss the rebuild cannot repair; run fsck)\n");
        }
        if (r.replacedDir() != null) {
            b.append("  the old GC directory was kept as ").append(dataDir.resolve(r.replacedDir()))
                    .append(" (delete it once the server runs)\n");
        }
        b.append("result: rebuilt");
        return b.toString();
    }

    static String toJson(GcMetadataRebuild.Report r) {
        return "{\"result\":\"rebuilt\",\"volumes\":" + r.volumes() + ",\"snapshots\":" + r.snapshots()
                + ",\"mapEntries\":" + r.mapEntries() + ",\"referencedBlocks\":" + r.referencedPbns()
                + ",\"storedBlocks\":" + r.storedPbns() + ",\"unreferencedStoredBlocks\":" + r.unreferencedStored()
                + ",\"referencedMissingBlocks\":" + r.referencedMissing() + ",\"pinnedBlocks\":" + r.pinnedPbns()
                + ",\"chunksWritten\":" + r.chunksWritten() + ",\"passes\":" + r.passes() + ",\"lastOpId\":" + r.lastOpId()
                + ",\"graceUntilMillis\":" + r.graceUntil() + ",\"replacedDir\":"
                + (r.replacedDir() == null ? "null" : "\"" + jsonEscape(r.replacedDir()) + "\"") + ",\"millis\":" + r.millis() + "}";
    }

    public static String jsonEscape(String s) {
        StringBuilder b = new StringBuilder();
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }

    /** "24h", "90m", "30s", "2d", "500ms" or ISO-8601 ("PT24H"). */
    public static Duration parseDuration(String s) {
        String t = s.trim().toLowerCase(Locale.ROOT);
        try {
            if (t.startsWith("p")) {
                return Duration.parse(s.trim());
            }
            if (t.endsWith("ms")) {
                return Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2)));
            }
            long n = Long.parseLong(t.substring(0, t.length() - 1));
            return switch (t.charAt(t.length() - 1)) {
                case 's' -> Duration.ofSeconds(n);
                case 'm' -> Duration.ofMinutes(n);
                case 'h' -> Duration.ofHours(n);
                case 'd' -> Duration.ofDays(n);
                default -> throw new IllegalArgumentException("bad duration '" + s + "' (use e.g. 24h, 90m, 2d)");
            };
        } catch (RuntimeException e) {
            if (e instanceof IllegalArgumentException && e.getMessage() != null && e.getMessage().startsWith("bad duration")) {
                throw e;
            }
            throw new IllegalArgumentException("bad duration '" + s + "' (use e.g. 24h, 90m, 2d)");
        }
    }
}
