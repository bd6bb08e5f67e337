package org.holdfast.server.app;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.CatalogBackupJobs;
import org.holdfast.server.catalog.JobStore;
import org.holdfast.server.catalog.SequenceFloor;
import org.holdfast.server.gc.GcMetadataRebuild;
import org.holdfast.server.gc.OfflineProperties;
import org.holdfast.server.gc.RestoredWorkerCounts;
import org.holdfast.server.ingest.cluster.OwedForgets;
import org.holdfast.server.store.BadBlocks;
import org.holdfast.server.store.CatalogBackups;
import org.holdfast.server.store.CatalogRestoreRefusedException;
import org.holdfast.server.store.DataDirectory;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.StoreAfterRestore;
import org.holdfast.server.store.StoreException;
import org.holdfast.server.store.UnknownCatalogBackupException;
import org.holdfast.server.store.VerifyLedger;
import org.holdfast.server.store.object.ObjectStore;
import org.holdfast.server.store.object.S3ObjectStore;
import org.holdfast.server.store.object.S3Settings;
import org.holdfast.server.verify.DamageAttribution;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.TypeConversionException;
import picocli.CommandLine.Unmatched;

/**
 * The offline restore of a catalog backup into a stopped server's data directory (a new machine,
 * or a damaged catalog): {@code holdfast-server catalog-restore --data-dir D --from BACKUPDIR
 * [--backup-id N] [--sequence-gap N] [--scratch-dir DIR] [--holdfast.store.NAME=VALUE ...]}.
 *
 * <p>In order: refuses while a server holds {@code D}; checks the backup exists and verifies it (every
 * file's size and CRC32C; a damaged one is refused naming an older backup to try; nothing changed
 * otherwise); moves an existing {@code catalog/} aside (never deletes it); restores the backup
 * (every file checksummed); raises each volume's sequence floor to the newest sequence the catalog
 * moved aside records (if it still reads) and then {@code --sequence-gap} past its newest snapshot
 * ({@link SequenceFloor}), so ids of snapshots lost with the restore are not handed out again; makes the data store safe to continue ({@link StoreAfterRestore}: new
 * log ids and PBNs above everything in the logs and the bucket); rebuilds {@code gc/} from the
 * restored catalog ({@link GcMetadataRebuild}, what gc-rebuild runs). The dedup engine's state
 * ({@code containers/}, {@code sungem/}) is kept: an engine answer naming a PBN of a lost snapshot is
 * never taken, because the backup session proves every hit against the catalog's possession
 * fingerprint and location, which the restored catalog lacks for such a PBN, and the PBN is never
 * handed out again. On a master with {@code holdfast.cluster.data=workers} it also drops the GC
 * outbox, moves GC operation ids past the workers' and fences every worker's counts until they are
 * rebuilt from the restored catalog ({@link RestoredWorkerCounts}), and, given the bucket, raises each
 * worker's takeover fence to the bucket's epoch ({@link RestoredTakeoverFences}). Exit codes: 0 restored, 2 bad arguments or unknown backup (nothing changed),
 * 3 could not run (see the message; where the old catalog went is printed).
 */
@Command(name = "catalog-restore", sortOptions = false,
        customSynopsis = {"usage: holdfast-server catalog-restore --data-dir DIR --from BACKUPDIR [--backup-id N] [--sequence-gap N]",
            "                                       [--scratch-dir DIR]",
            "                                       [--holdfast.store.backend=s3 --holdfast.store.s3.NAME=VALUE ...]"},
        description = {"Restores a catalog backup (holdfast.catalog.backup.directory) into DIR. The server must be stopped.",
            "The backup is verified first (every file's size and checksum): a damaged one is refused, nothing changed.",
            "An existing DIR/catalog is moved aside, never deleted. Snapshots committed after the backup are lost.",
            "With backend s3, give the server's --holdfast.store.* settings (or system properties, or HOLDFAST_STORE_*",
            "environment variables).", ""},
        footer = {"", "exit: 0 restored, 2 bad arguments or unknown backup (nothing changed), 3 could not run (see the message)"})
public final class CatalogRestoreTool implements Callable<Integer> {
    private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss").withZone(ZoneOffset.UTC);

    @Mixin
    HelpOption help;

    @Mixin
    DataDirOption dataDir;

    @Option(names = "--from", paramLabel = "BACKUPDIR", required = true, order = 1,
            description = "the catalog backup directory (the server's holdfast.catalog.backup.directory)")
    Path from;

    @Option(names = "--backup-id", paramLabel = "N", converter = BackupIdConverter.class, order = 2,
            description = "the backup to restore (GET /api/v1/catalog/backups lists them); default: the newest")
    Integer backupId;

    @Option(names = "--sequence-gap", paramLabel = "N", order = 3,
            description = "each volume's next snapshot sequence goes N past its newest one in the backup, so the ids of up to N"
                    + " snapshots lost with the restore are not handed out again (0 to " + SequenceFloor.MAX_RESTORE_GAP
                    + "; default: " + SequenceFloor.DEFAULT_RESTORE_GAP + ")")
    long sequenceGap = SequenceFloor.DEFAULT_RESTORE_GAP;

    @Mixin
    ScratchDirOption scratch;

    /** The server's --holdfast.NAME=VALUE settings (ServerSettings checks that nothing else is among them). */
    @Unmatched
    List<String> settings = new ArrayList<>();

    @Spec
    CommandSpec spec;

    private final ToolConsole console;

    CatalogRestoreTool(ToolConsole console) {
        this.console = console;
    }

    public static void main(String[] args) {
        ServerCli.main(ServerCli.named("catalog-restore", args));
    }

    /** Runs {@code catalog-restore} with {@code args}, restores and prints; returns the exit code. */
    public static int run(String[] args, PrintStream out, PrintStream err, Clock clock) {
        return ServerCli.run(ServerCli.named("catalog-restore", args), out, err, clock);
    }

    @Override
    public Integer call() {
        OfflineProperties props = ServerSettings.of(settings, spec);
        PrintStream err = console.err();
        if (!Files.isDirectory(from.resolve("meta"))) {
            err.println("catalog-restore: " + from + " holds no catalog backups (no meta/ in it); give the server's"
                    + " holdfast.catalog.backup.directory");
            return 2;
        }
        if (sequenceGap < 0 || sequenceGap > SequenceFloor.MAX_RESTORE_GAP) {
            err.println("catalog-restore: --sequence-gap " + sequenceGap + " is not in 0.." + SequenceFloor.MAX_RESTORE_GAP
                    + "; give at least the number of snapshots a volume may have taken since the backup; nothing was changed");
            return 2;
        }
        S3Settings s3;
        try {
            s3 = S3Settings.fromProperties(props);
        } catch (IllegalArgumentException e) {
            err.println("catalog-restore: " + e.getMessage());
            return 2;
        }
        return restoreInto(dataDir.dataDir, from, backupId, scratch.scratchDir(), s3, props, sequenceGap, console.out(), err,
                console.clock());
    }

    private static int restoreInto(Path dataDir, Path from, Integer id, Path scratch, S3Settings s3, OfflineProperties props,
                                   long sequenceGap, PrintStream out, PrintStream err, Clock clock) {
        // the data directory's lock first: a running server is refused before the backups are opened
        try (DataDirectory dd = DataDirectory.open(dataDir);
             CatalogBackups backups = CatalogBackups.open(from)) {
            CatalogBackups.Info chosen;
            try {
                chosen = backups.require(id);
            } catch (UnknownCatalogBackupException e) {
                err.println("catalog-restore: " + e.getMessage() + "; nothing was changed");
                return 2;
            }
            if (!verified(backups, chosen, err, clock)) {
                return 3;
            }
            return restore(dd, backups, chosen, s3, props.apply("holdfast.store.s3.node"), scratch, sequenceGap, out, err, clock);
        } catch (StoreException e) {
            err.println("catalog-restore: could not run: " + e.getMessage());
            return 3;
        }
    }

    /**
     * Checks every file of the chosen backup (size and CRC32C) before anything in the data directory
     * moves: a damaged backup is refused with the newest older one that holds none of its damaged files.
     */
    private static boolean verified(CatalogBackups backups, CatalogBackups.Info chosen, PrintStream err, Clock clock) {
        err.println("catalog-restore: verifying backup " + chosen.id() + " (" + chosen.files() + " files, " + chosen.bytes()
                + " bytes) before changing anything");
        CatalogBackups.Verification v = backups.verify(chosen.id(), true, n -> { }, clock.millis());
        if (v.sound()) {
            return true;
        }
        Integer older = soundOlder(backups, chosen.id(), v.damagedFiles(), err, clock);
        err.println("catalog-restore: refused: catalog backup " + chosen.id() + " is damaged: " + v.damaged() + " of its " + v.files()
                + " files fail verification (" + String.join("; ", v.problems()) + ")");
        err.println("catalog-restore: " + (older == null
                ? "no older backup in " + backups.dir() + " is free of the damaged files; look for a copy of the backup directory"
                        + " made before the damage (its files never change once written)"
                : "try the older backup " + older + ", which holds none of the damaged files and verified sound: --backup-id " + older)
                + "; nothing was changed");
        return false;
    }

    /**
     * The newest backup older than {@code id} that holds none of the damaged files and verifies sound
     * now (a backup without the rotten table may have damage of its own), or null.
     */
    private static Integer soundOlder(CatalogBackups backups, int id, List<String> damaged, PrintStream err, Clock clock) {
        List<String> avoid = new ArrayList<>(damaged);
        for (Integer older = backups.olderWithout(id, avoid); older != null; older = backups.olderWithout(older, avoid)) {
            err.println("catalog-restore: verifying the older backup " + older + " before naming it");
            CatalogBackups.Verification v = backups.verify(older, true, n -> { }, clock.millis());
            if (v.sound()) {
                return older;
            }
            err.println("catalog-restore: backup " + older + " is damaged too (" + String.join("; ", v.problems()) + ")");
            avoid.addAll(v.damagedFiles());
        }
        return null;
    }

    private static int restore(DataDirectory dd, CatalogBackups backups, CatalogBackups.Info chosen, S3Settings s3, String node,
                               Path scratch, long sequenceGap, PrintStream out, PrintStream err, Clock clock) {
        Path catalogDir = dd.catalogDir();
        Path aside = null;
        try {
            if (Files.exists(catalogDir)) {
                String name = "catalog.before-restore-" + STAMP.format(clock.instant());
                aside = dd.root().resolve(name);
                for (int n = 2; Files.exists(aside); n++) {
                    aside = dd.root().resolve(name + "-" + n); // two restores within a second
                }
                Files.move(catalogDir, aside);
                err.println("catalog-restore: moved the existing catalog aside to " + aside);
            }
        } catch (IOException e) {
            err.println("catalog-restore: could not run: cannot move " + catalogDir + " aside (" + e + "); nothing was changed");
            return 3;
        }
        try {
            backups.restore(chosen.id(), catalogDir);
        } catch (RuntimeException e) {
            err.println("catalog-restore: failed to restore backup " + chosen.id() + " (" + e.getMessage() + ")");
            putBack(catalogDir, aside, err);
            return 3;
        }
        err.println("catalog-restore: restored backup " + chosen.id() + " of " + Instant.ofEpochSecond(chosen.timeSeconds())
                + " into " + catalogDir);
        try (MetadataDb db = MetadataDb.open(catalogDir);
             ObjectStore objects = s3 == null ? null : S3ObjectStore.connect(s3)) {
            Catalog catalog = new Catalog(db);
            // first, before any step that can fail: a restored catalog left in place by a failure below must not
            // have its workers swept on counts that predate it, nor hand out their logged operation ids again
            RestoredWorkerCounts.Report workers = RestoredWorkerCounts.applies(db)
                    && GcBookkeepingMode.recorded(db) != GcBookkeepingMode.OFF ? RestoredWorkerCounts.run(catalog, clock.millis()) : null;
            // before any step that can fail too: a restored catalog left in place must not hand out a lost snapshot's id;
            // the catalog moved aside, if it still reads, knows the newest sequences exactly
            String previous = null;
            if (aside != null) {
                try {
                    previous = volumes(SequenceFloor.raiseFrom(catalog, aside));
                } catch (StoreException e) { // CorruptDataException among them: a value this server does not write
                    previous = "could not be read (" + e.getMessage() + "): only the gap keeps their ids";
                }
            }
            int floorsRaised = SequenceFloor.raiseAll(catalog, sequenceGap);
            long[] held = CatalogBackupJobs.count(catalog);
            int jobsEnded = JobStore.endCutOffByRestore(db, clock.instant());
            StoreAfterRestore.Report r = StoreAfterRestore.run(dd.dataDir(), db, objects, node, scratch);
            out.println("catalog-restore: restored catalog backup " + chosen.id() + " taken " + Instant.ofEpochSecond(chosen.timeSeconds()));
            out.println("  snapshots in it: " + held[0] + ", the newest taken " + (held[1] == 0 ? "(none)" : Instant.ofEpochMilli(held[1])));
            out.println("  LOST: every snapshot committed after " + (held[1] == 0 ? "the backup" : Instant.ofEpochMilli(held[1]))
                    + " is gone (back those volumes up again); so are users, tokens, policies and settings changed after the backup:"
                    + " a token revoked after the backup is valid again (revoke it again)");
            out.println("  snapshot ids: in " + volumes(floorsRaised) + ", the next snapshot takes a sequence at least "
                    + sequenceGap + " past its newest one here, so the ids of lost snapshots are not handed out again"
                    + (sequenceGap == 0 ? " (--sequence-gap 0: they may be)" : " (up to " + sequenceGap + " per volume; an agent whose"
                    + " state names a newer one moves it further)"));
            if (previous != null) {
                out.println("  snapshot ids from the catalog moved aside, past its newest snapshot of each volume: " + previous);
            }
            out.println("  data store: continues in new data log " + r.newLogId() + " (the backup's was " + r.backupLogId()
                    + "); next PBN " + r.pbnReservedAfter() + " (the backup's was " + r.pbnReservedBefore() + "), " + r.logsScanned()
                    + " logs read for PBNs" + (s3 == null ? "" : ", " + r.logsAdopted() + " uploads confirmed from the bucket"));
            if (r.blocksRelocated() > 0) {
                out.println("  " + r.blocksRelocated() + " block locations moved to where compaction after the backup put their records");
            }
            if (!r.missingLogs().isEmpty()) {
                out.println("  WARNING: " + r.blocksLost() + " blocks the backup names are gone (freed and compacted away after the"
                        + " backup, or their log is missing), in data logs " + r.missingLogs().stream().limit(20).toList()
                        + "; the snapshots that use them cannot be restored whole");
                // marked now, so the first backup after the start repairs them instead of building on the hole
                DamageAttribution.Result d = DamageAttribution.record(catalog, BadBlocks.of(db), new VerifyLedger(db));
                out.println("  marked " + r.blocksMarkedBad() + " of them bad" + (r.blocksMarkedBad() < r.blocksLost()
                        ? " (the others were bad already)" : "") + "; " + d.damagedSnapshots().size() + " snapshots reference them and"
                        + " are flagged damaged: " + d.damagedSnapshots().stream().limit(20).toList()
                        + (d.damagedSnapshots().size() > 20 ? " and more" : ""));
                out.println("  next: back up those volumes from their sources: the server turns each one's next backup full, which"
                        + " repairs the blocks in place, and the flagged snapshots restore again (GET /api/v1/verify lists the"
                        + " damaged volumes; see docs/operations.md, \"Catalog restore\")");
            }
            if (workers != null) {
                // the forgets owed to absent workers and their markers are not in the backup: every worker may have missed some
                OwedForgets.distrustAll(dd.root(), workers.fenced(), "its master was restored from a catalog backup, which holds"
                        + " no forgets owed to workers");
                WorkersRestoreNotes.print(workers, dd.root(), out);
                WorkersRestoreNotes.printFences(objects == null ? null : RestoredTakeoverFences.raise(db, objects), out);
            }
            if (GcBookkeepingMode.recorded(db) == GcBookkeepingMode.OFF) {
                out.println("  GC bookkeeping is off in this store: no GC metadata to rebuild");
            } else {
                // with data=workers the master's own gc/ counts only its own range: the workers' counts are rebuilt on them
                long counted = RestoredWorkerCounts.applies(db) ? RestoredWorkerCounts.workersFrom(db) : Long.MAX_VALUE;
                GcMetadataRebuild.Report g = new GcMetadataRebuild(dd.root(), catalog, GcMetadataRebuild.Settings.defaults(), clock,
                        line -> err.println("catalog-restore: gc-rebuild: " + line), counted).run();
                out.println("  GC metadata rebuilt from the restored catalog: " + g.referencedPbns() + " referenced blocks"
                        + (g.replacedDir() == null ? "" : "; the old one kept as " + dd.root().resolve(g.replacedDir())));
            }
            out.println("  dedup engine state (containers/, sungem/) kept: answers naming blocks of lost snapshots are refused by the"
                    + " possession check and relearned");
            if (jobsEnded > 0) {
                out.println("  " + jobsEnded + " job(s) the backup held as queued or running (the catalog backup that wrote it among"
                        + " them) are recorded as ended by this restore");
            }
            if (aside != null) {
                out.println("  the catalog that was here is kept as " + aside + " (delete it once the server runs)");
            }
            out.println(nextStep(dd.root(), workers != null));
            out.println("result: restored");
            return 0;
        } catch (CatalogRestoreRefusedException e) {
            // nothing was written yet: the catalog that was here goes back (a server started on a misfit one would free blocks)
            err.println("catalog-restore: " + e.getMessage());
            putBack(catalogDir, aside, err);
            return 3;
        } catch (RuntimeException e) {
            err.println("catalog-restore: failed after the catalog was restored (" + e.getMessage() + "); the restored catalog is in "
                    + catalogDir + (aside == null ? "" : ", the previous one in " + aside) + "; fix the cause and run catalog-restore again");
            return 3;
        }
    }

    /** After a failed restore: removes what it wrote and moves the old catalog back. */
    private static void putBack(Path catalogDir, Path aside, PrintStream err) {
        try {
            if (Files.exists(catalogDir)) {
                try (Stream<Path> s = Files.walk(catalogDir)) {
                    for (Path p : s.sorted((a, b) -> b.getNameCount() - a.getNameCount()).toList()) {
                        Files.delete(p);
                    }
                }
            }
            if (aside != null) {
                Files.move(aside, catalogDir);
            }
            err.println("catalog-restore: nothing was changed");
        } catch (IOException e) {
            err.println("catalog-restore: could not put the old catalog back (" + e + "); it is in " + aside);
        }
    }

    /** A backup id exactly as the API lists it: no sign, blanks or leading zeros. */
    static final class BackupIdConverter implements ITypeConverter<Integer> {
        @Override
        public Integer convert(String value) {
            try {
                if (!value.matches("[1-9][0-9]*")) {
                    throw new NumberFormatException();
                }
                return Integer.parseInt(value);
            } catch (NumberFormatException e) {
                throw new TypeConversionException("a backup id is a positive number, got '" + value + "'");
            }
        }
    }

    /**
     * The restore's "next:" line. The offline fsck refuses a running server, so a standalone one names
     * both ways; it also refuses a data=workers master, whose check is the online one once the workers'
     * counts are rebuilt and they run again.
     */
    static String nextStep(Path root, boolean dataOnWorkers) {
        if (dataOnWorkers) {
            return "next: rebuild each fenced worker's counts (above), start the master, then the workers, and run"
                    + " POST /api/v1/gc/fsck (it checks the workers' counts; the offline fsck refuses a data=workers master)"
                    + " and a full verify; then take a new catalog backup";
        }
        return "next: check it before the start with holdfast-server fsck " + root + ", or start the server and run"
                + " POST /api/v1/gc/fsck; then take a new catalog backup";
    }

    private static String volumes(long n) {
        return n + (n == 1 ? " volume" : " volumes");
    }
}
