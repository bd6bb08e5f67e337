package org.holdfast.server.app;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import org.holdfast.server.gc.RestoredWorkerCounts;

/** What {@code catalog-restore} prints about the workers of a master with {@code data=workers}: what it did, and each next step. */
final class WorkersRestoreNotes {
    private WorkersRestoreNotes() {
    }

    static void print(RestoredWorkerCounts.Report r, Path dataDir, PrintStream out) {
        out.println("  data on workers: the workers' GC counts include what the lost master did after the backup: "
                + r.outboxEntriesDropped() + " GC deltas of the backup's outbox dropped (older than what the workers applied);"
                + " GC operation ids continue at " + r.nextOpIdAfter() + " (the backup's: " + r.nextOpIdBefore() + ")");
        out.println("  worker ids up to " + r.idsRetiredThrough() + " are retired: a node the lost master registered after the backup"
                + " is refused (its range data is for a range no longer its), and a new node gets a range nobody used");
        if (r.fenced().isEmpty()) {
            out.println("  no worker in the restored registry");
            return;
        }
        out.println("  workers " + r.fenced() + " are FENCED: never asked to sweep (their counts may be below the restored"
                + " catalog's, and a sweep would free blocks it still references) until their counts are rebuilt from it. For each"
                + " worker N, with the master stopped and worker N stopped:");
        out.println("    1. holdfast-server gc-rebuild --data-dir " + dataDir + " --worker N --out /tmp/worker-N.counts");
        out.println("    2. on worker N: holdfast-server worker-gc-import --data-dir <worker data dir> --file /tmp/worker-N.counts");
        out.println("    3. start both: worker N's registration lifts its fence (it reports the counts it imported; logged and"
                + " audited as cluster.worker.counts-fence). A worker of a release before cluster protocol version 7 does not"
                + " report them: lift its fence by hand instead, with the master stopped: holdfast-server gc-rebuild --data-dir "
                + dataDir + " --worker N --counts-imported /tmp/worker-N.counts");
        out.println("  workers " + r.fenced() + " are distrusted for dedup across ranges: the forgets owed to them are not in the"
                + " backup, so the master takes their answers naming another worker's blocks as misses (dedup only; until a"
                + " worker is removed)");
        out.println("  then run verify (POST /api/v1/verify): snapshots deleted after the backup whose blocks a worker freed are named"
                + " damaged; a node that is not in the restored registry must not be started as a worker (docs/operations.md,"
                + " \"Recover a lost master of a data=workers cluster\")");
    }

    /** The takeover fences raised from the bucket ({@code raised} null: no bucket settings given, nothing checked). */
    static void printFences(List<RestoredTakeoverFences.Raised> raised, PrintStream out) {
        if (raised == null) {
            out.println("  takeover fences not checked against a bucket (no --holdfast.store.s3.* settings given): if the workers"
                    + " archive to one, a node whose range was taken over after the backup registers again and only its own check"
                    + " of the bucket keeps it from serving; run catalog-restore again with the bucket's settings");
            return;
        }
        for (RestoredTakeoverFences.Raised r : raised) {
            out.println("  worker " + r.workerId() + " was taken over after the backup: its takeover fence is raised from epoch "
                    + r.from() + " to the bucket's " + r.to() + "; a node of it whose range data is older is refused");
        }
    }
}
