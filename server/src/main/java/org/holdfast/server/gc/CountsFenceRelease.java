package org.holdfast.server.gc;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Instant;
import org.holdfast.server.catalog.ClusterStore;
import org.holdfast.server.cluster.WorkerRecord;
import org.holdfast.server.store.DataDirectory;
import org.holdfast.server.store.MetadataDb;

/**
 * {@code gc-rebuild --worker N --counts-imported FILE} on a stopped master: lifts worker N's counts
 * fence ({@link WorkerCountsFences}, set by a catalog restore) once the operator imported FILE on
 * that worker. FILE must be a whole counts file of that worker and range whose mark is at or above
 * the fence's floor, so a file exported before the restore (whose counts include deltas the
 * restored catalog never made) cannot lift it. Whether the import ran is the operator's word: the
 * step says so. For a worker before cluster version 7: a newer one reports its import at REGISTER and
 * the master lifts the fence itself ({@link RegistrationCountsFence}). Exit 0 lifted (or no fence), 3
 * refused or could not run (nothing changed).
 */
public final class CountsFenceRelease {
    private CountsFenceRelease() {
    }

    /** Lifts worker {@code worker}'s fence in {@code dataDir}'s catalog after checking {@code file}; returns the exit code. */
    public static int run(Path dataDir, long worker, Path file, PrintStream out, PrintStream err) {
        if (!GcRebuildTool.isDataDirectory(dataDir, err)) {
            return 3;
        }
        try (DataDirectory dd = DataDirectory.open(dataDir);
             MetadataDb db = MetadataDb.open(dd.catalogDir())) {
            WorkerCountsFences fences = new WorkerCountsFences(db);
            WorkerCountsFences.Fence fence = fences.of(worker);
            if (fence == null) {
                out.println("gc-rebuild: worker " + worker + " has no counts fence (none was set, or it was lifted); nothing to do");
                out.println("result: not fenced");
                return 0;
            }
            WorkerRecord w = new ClusterStore(db).workers().stream().filter(r -> r.workerId() == worker).findFirst().orElse(null);
            WorkerCountsFile.Header h = WorkerCountsFile.verify(file);
            String wrong = w == null ? "this master has no worker " + worker
                    : h.workerId() != worker ? file + " holds the counts of worker " + h.workerId() + ", not of worker " + worker
                    : !h.range().equals(w.range()) ? file + " is for PBNs " + h.range() + ", worker " + worker + " owns " + w.range()
                    : h.mark() < fence.floor() ? file + " was exported before the catalog restore (mark " + h.mark() + ", below "
                            + fence.floor() + "): its counts include deltas the restored catalog never made"
                    : null;
            if (wrong != null) {
                err.println("gc-rebuild: refused: " + wrong + "; export worker " + worker + "'s counts from this catalog (gc-rebuild"
                        + " --worker " + worker + " --out FILE), import that file on the stopped worker (worker-gc-import), then give"
                        + " it here; the fence stays, nothing was changed");
                return 3;
            }
            fences.clear(worker);
            out.println("gc-rebuild: lifted the counts fence of worker " + worker + " (set by the catalog restore of "
                    + (fence.restoredMillis() < 0 ? "an unknown time" : Instant.ofEpochMilli(fence.restoredMillis())) + "): it is swept"
                    + " again from the master's next start. This trusts that " + file + " (mark " + h.mark() + ") was imported on the"
                    + " worker with worker-gc-import; if it was not, the worker may free blocks the catalog references");
            out.println("result: lifted");
            return 0;
        } catch (RuntimeException e) {
            err.println("gc-rebuild: could not run (" + e.getMessage() + "); the fence stays, nothing was changed");
            return 3;
        }
    }
}
