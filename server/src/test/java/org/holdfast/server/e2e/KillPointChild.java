package org.holdfast.server.e2e;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.TreeMap;
import org.holdfast.common.id.VolumeId;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.gc.GcMetadataRebuild;
import org.holdfast.server.gc.VolumeGate;
import org.holdfast.server.jobs.JobContext;
import org.holdfast.server.store.MetadataDb;

/**
 * The child JVM of {@link KillPointCrashTest}: a workload that passes every registered kill point
 * in each round, until it is killed or halts at its armed point. A round: one volume to keep and
 * one to delete, their blocks interleaved in the data logs (one kept block, three doomed ones, so
 * the logs end up mostly dead but not empty); both commits; a kept block marked bad and repaired
 * by an upload of its content (append, the switch of its location); the deletion; reclaim-now (frees the
 * doomed blocks in batches, then compacts the logs: copy, switch); a GC metadata rebuild with the
 * storage closed (chunks, verify, the renames). Every block's content follows from its volume's
 * name and LBN ({@link #content}), so the test can check whatever volume a crash left behind.
 * Prints {@code committed NAME@SEQ} once a commit is durable and {@code deleting NAME} before a deletion starts.
 *
 * <p>Arguments: the stack directory, the iteration (makes volume names unique).
 */
public final class KillPointChild {
    static final int BLOCKS = 96;

    private KillPointChild() {
    }

    /** The content id of LBN {@code lbn} of volume {@code name} (never 0: no zero blocks). */
    static long content(String name, int lbn) {
        return ((name.hashCode() & 0x7fffffffL) << 16) + lbn + 1;
    }

    public static void main(String[] args) {
        Path root = Path.of(args[0]);
        int iteration = Integer.parseInt(args[1]);
        System.out.println("ready");
        for (int k = 0; ; k++) {
            String keep = "keep-" + iteration + "-" + k;
            String doomed = "doomed-" + iteration + "-" + k;
            ReclaimStack s = ReclaimStack.open(root);
            System.out.println("phase commit " + k);
            TreeMap<Long, Long> kept = new TreeMap<>();
            TreeMap<Long, Long> gone = new TreeMap<>();
            for (int lbn = 0; lbn < BLOCKS; lbn++) {
                kept.put((long) lbn, s.storeBlock(content(keep, lbn)));
                for (int j = 0; j < 3; j++) {
                    int d = 3 * lbn + j;
                    gone.put((long) d, s.storeBlock(content(doomed, d)));
                }
            }
            System.out.println("committed " + keep + "@" + s.commit(new VolumeId(keep), 0, BLOCKS, kept));
            System.out.println("committed " + doomed + "@" + s.commit(new VolumeId(doomed), 0, 3 * BLOCKS, gone));
            System.out.println("phase repair " + k);
            s.markBadAndRepair(content(keep, 0), kept.get(0L));
            System.out.println("repaired " + keep);
            System.out.println("phase delete " + k);
            System.out.println("deleting " + doomed);
            s.gc.deleteVolume(new VolumeId(doomed), VolumeGate.NONE);
            System.out.println("deleted " + doomed);
            System.out.println("phase reclaim " + k);
            System.out.println("reclaimed " + s.gc.reclaimNow(JobContext.NONE).blocksFreed());
            s.close();
            System.out.println("phase rebuild " + k);
            try (MetadataDb db = MetadataDb.open(root.resolve("catalog"))) {
                new GcMetadataRebuild(root, new Catalog(db), new GcMetadataRebuild.Settings(Duration.ofHours(1), 1), Clock.systemUTC(),
                        line -> { }).run();
            }
            System.out.println("rebuilt " + k);
        }
    }
}
