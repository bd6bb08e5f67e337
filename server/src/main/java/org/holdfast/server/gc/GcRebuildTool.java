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
 * {@code holdfast-server gc-rebuild --data-dir D [--grace 24h] [--json]}. Progress goes to stderr,
 * the result to stdout (text, or one JSON object with {@code --json}). Exit code 0: rebuilt and
 * swapped in; 2: bad arguments; 3: could not run (no rebuilt metadata swapped in; safe to re-run).
 */
public final class GcRebuildTool {
    static final String USAGE = """
            usage: holdfast-server gc-rebuild --data-dir DIR [--grace 24h] [--pass-chunks 512] [--json]
              Rebuilds DIR/gc (GC metadata) from the catalog. The server must be stopped.
              --grace        the server's holdfast.gc.grace: no block is freed sooner than this after the rebuild
              --pass-chunks  GMA chunks (8191 blocks, about 140 KiB of memory each) rebuilt per pass
              --json         print the result as one JSON object""";

    private GcRebuildTool() {
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err, Clock.systemUTC()));
    }

    /** Parses {@code args}, runs the rebuild and prints; returns the exit code. */
    static int run(String[] args, PrintStream out, PrintStream err, Clock clock) {
        Path dataDir = null;
        Duration grace = GcMetadataRebuild.Settings.defaults().grace();
        int passChunks = GcMetadataRebuild.Settings.defaults().passChunks();
        boolean json = false;
        try {
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                    case "--data-dir" -> dataDir = Path.of(value(args, ++i, "--data-dir"));
                    case "--grace" -> grace = parseDuration(value(args, ++i, "--grace"));
                    case "--pass-chunks" -> passChunks = Integer.parseInt(value(args, ++i, "--pass-chunks"));
                    case "--json" -> json = true;
                    case "-h", "--help" -> {
                        out.println(USAGE);
                        return 0;
                    }
                    default -> throw new IllegalArgumentException("unknown argument '" + args[i] + "'");
                }
            }
            if (dataDir == null) {
                throw new IllegalArgumentException("--data-dir is required");
            }
            GcMetadataRebuild.Settings settings = new GcMetadataRebuild.Settings(grace, passChunks);
            if (!Files.isDirectory(dataDir.resolve("catalog"))) {
                err.println("gc-rebuild: " + dataDir + " is not a Holdfast data directory (no catalog/ in it)");
                return 3;
            }
            return rebuild(dataDir, settings, json, out, err, clock);
        } catch (IllegalArgumentException e) {
            err.println("gc-rebuild: " + e.getMessage());
            err.println(USAGE);
            return 2;
        }
    }

    private static int rebuild(Path dataDir, GcMetadataRebuild.Settings settings, boolean json, PrintStream out,
                               PrintStream err, Clock clock) {
        GcMetadataRebuild.Report r;
        try (DataDirectory dd = DataDirectory.open(dataDir);
             MetadataDb db = MetadataDb.open(dd.catalogDir())) {
            FormatVersions.refuseDataOnWorkers(db, "gc-rebuild");
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

    private static String jsonEscape(String s) {
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

    private static String value(String[] args, int i, String name) {
        if (i >= args.length) {
            throw new IllegalArgumentException(name + " needs a value");
        }
        return args[i];
    }

    /** "24h", "90m", "30s", "2d", "500ms" or ISO-8601 ("PT24H"). */
    static Duration parseDuration(String s) {
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
