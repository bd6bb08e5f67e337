package org.holdfast.server.gc;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import org.holdfast.gc.GcStoreException;
import org.holdfast.gc.bosc.BoscSettings;
import org.holdfast.gc.check.FsckReport;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.store.DataDirectory;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.LogArchive;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.OfflineVerifyRequest;
import org.holdfast.server.store.StoreException;
import org.holdfast.server.store.object.ObjectStoreStats;
import org.holdfast.server.store.object.S3ObjectStore;
import org.holdfast.server.store.object.S3Settings;

/**
 * Offline fsck of a stopped server's data directory: {@code holdfast-server fsck DIR [--scratch-dir DIR]}
 * (the command line: server/app's FsckCommand).
 * It writes nothing in the data directory: the data logs are opened read-only (a torn tail is left
 * for the server's next start), a shared lock keeps a server from starting meanwhile, and the
 * catalog and GC metadata are opened on a private scratch copy ({@link ScratchMetadata}, in the
 * system's temporary directory unless {@code --scratch-dir} says otherwise), where the GC log is
 * replayed and logged operations are re-driven as a server start would. The one thing it leaves in
 * the data directory: when it finds corrupt blocks, an {@link OfflineVerifyRequest} (the verify
 * pass the online fsck queues), which the server runs at its next start. Exit code 0: clean; 1:
 * leaks or bookkeeping disagreements; 2: data loss; 3: could not run.
 *
 * <p>Backend s3: given the server's {@code holdfast.store.*} settings (as {@code --name=value}
 * arguments, system properties or {@code HOLDFAST_STORE_*} environment variables), a data log missing
 * on the local disk is fetched from the object store into the scratch directory; nothing is uploaded
 * and the bucket is only read. An unreachable store ends the run with code 3, never as data loss.
 */
public final class FsckTool {
    private FsckTool() {
    }

    /**
     * Leaves the verify request for the server's next start and says so; a data directory that
     * refuses it (read-only, full) is reported with what to do instead, and the report's exit code stands.
     */
    private static void requestVerify(Path root, long[] corrupt) {
        try {
            OfflineVerifyRequest r = OfflineVerifyRequest.write(root, "fsck", corrupt, System.currentTimeMillis());
            System.out.println("verify pass requested: the server runs it at its next start (" + OfflineVerifyRequest.file(root)
                    + (r.full() ? ", reading every block" : ", " + r.pbns().length + " blocks to read again")
                    + "); it flags the volumes that use the corrupt blocks, whose next backups repair them");
        } catch (StoreException e) {
            System.out.println("verify pass NOT requested: " + e.getMessage() + "; once the server runs, start a full verify pass"
                    + " (POST /api/v1/verify with {\"full\": true}): it flags the volumes that use the corrupt blocks, whose next"
                    + " backups repair them");
        }
    }

    /** Runs the check with its scratch copy in the system's temporary directory; see {@link #run(Path, Path)}. */
    static int run(Path dataDir) {
        return run(dataDir, Path.of(System.getProperty("java.io.tmpdir")));
    }

    /** Runs the check and prints it; returns the exit code. The scratch copy of the metadata goes under {@code scratchParent}. */
    static int run(Path dataDir, Path scratchParent) {
        return run(dataDir, scratchParent, null);
    }

    /** As {@link #run(Path, Path)}, fetching logs missing locally from the object store {@code s3} (null: backend local). */
    public static int run(Path dataDir, Path scratchParent, S3Settings s3) {
        if (!java.nio.file.Files.isDirectory(dataDir.resolve("catalog"))) {
            throw new IllegalArgumentException(dataDir + " is not a Holdfast data directory (no catalog/ in it); give the server's holdfast.data-dir");
        }
        try (DataDirectory dd = DataDirectory.openReadOnly(dataDir);
             ScratchMetadata copy = ScratchMetadata.copy(dd.root(), scratchParent);
             MetadataDb db = MetadataDb.open(copy.catalogDir());
             LogArchive archive = s3 == null ? null : new LogArchive(S3ObjectStore.connect(s3), null);
             DataStore store = archive == null ? DataStore.openReadOnly(dd.dataDir(), db)
                     : DataStore.openReadOnly(copy.linkDataLogs(dd.dataDir()), db, archive)) {
            FormatVersions.refuseDataOnWorkers(db, "fsck");
            Catalog catalog = new Catalog(db);
            GcService opened;
            try {
                // no fingerprint index: fsck never frees anything
                opened = GcService.open(new GcService.Settings(copy.gcDir(), BoscSettings.defaults(),
                        Duration.ofHours(24), "30d", 64), catalog, store, null, Clock.systemUTC(), Object::new);
            } catch (GcStoreException e) {
                // the message names the scratch copy; the operator needs the real directory
                throw new IllegalStateException("the GC metadata in " + dd.root().resolve("gc") + " cannot be used: "
                        + e.getMessage().replace(copy.gcDir().toString(), dd.root().resolve("gc").toString())
                                .replace(copy.gcDir().getParent().toString(), dd.root().toString())
                        + " (rebuild it: holdfast-server gc-rebuild --data-dir " + dd.root() + ")", e);
            }
            try (GcService gc = opened) {
                FsckReport f = gc.fsck();
                System.out.print(f.toText());
                if (f.corruptBlocks().count() > 0) {
                    // marked bad in the scratch copy only: the server reads them again, marks them for real and finds their snapshots
                    requestVerify(dd.root(), store.badBlocks().all().stream().mapToLong(b -> b.pbn()).toArray());
                }
                if (archive != null) {
                    ObjectStoreStats r = archive.stats().requests();
                    System.out.println("read from the object store: " + r.gets() + " GETs, " + r.getBytes() + " bytes");
                }
                return f.dataLoss() ? 2 : f.clean() ? 0 : 1;
            }
        }
    }
}
