package org.holdfast.server.e2e;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import org.holdfast.common.id.VolumeId;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.gc.GcService;
import org.holdfast.server.gc.VolumeGate;
import org.holdfast.server.jobs.JobContext;

/**
 * The child JVM of {@link ReclaimNowCrashTest}: opens the {@link ReclaimStack} (crash recovery runs),
 * then makes garbage and reclaims it, over and over, until it is killed: a scratch volume that
 * shares blocks with the retained {@code keep-} volumes and stores new ones, its deletion, and
 * reclaim-now. Every phase and every reclaim-now log line and freed batch goes to stdout, so the test
 * can tell where the kill landed. It never changes a {@code keep-} volume.
 *
 * <p>Arguments: the stack directory, a seed (makes the scratch contents unique per run).
 */
public final class ReclaimNowChild {
    private static final int SCRATCH_BLOCKS = 2000;
    private static final int SHARED = 400;

    private ReclaimNowChild() {
    }

    public static void main(String[] args) {
        Path root = Path.of(args[0]);
        long seed = Long.parseLong(args[1]);
        ReclaimStack s = ReclaimStack.open(root); // never closed: the test kills this JVM
        List<VolumeRecord> kept = new ArrayList<>();
        for (VolumeRecord v : s.catalog.volumes()) {
            if (v.name().name().startsWith("keep-")) {
                kept.add(v);
            }
        }
        System.out.println("ready");
        JobContext job = new JobContext() {
            @Override
            public void total(long items, long bytes) {
            }

            @Override
            public void advance(long items, long bytes) {
                if (bytes > 0) {
                    System.out.println("  batch freed " + bytes + " bytes");
                }
            }

            @Override
            public void log(String line) {
                System.out.println("  " + line);
            }

            @Override
            public boolean cancelRequested() {
                return false;
            }
        };
        for (long k = 0; ; k++) {
            System.out.println("phase backup " + k);
            VolumeId scratch = new VolumeId("scratch-" + Math.floorMod(seed, 1_000_000L) + "-" + k);
            TreeMap<Long, Long> delta = new TreeMap<>();
            List<long[]> newest = new ArrayList<>();
            for (VolumeRecord v : kept) {
                newest.add(s.pbns(v.name(), s.catalog.requireVolume(v.name()).latestSequence(), SHARED));
            }
            for (int lbn = 0; lbn < SCRATCH_BLOCKS; lbn++) {
                long pbn = 0;
                if (lbn < SHARED && !kept.isEmpty()) {
                    long shared = newest.get(lbn % kept.size())[lbn];
                    pbn = shared != 0 && s.gc.guard().protect(shared) ? shared : 0;
                }
                if (pbn == 0) {
                    pbn = s.storeBlock(1_000_000_000L + Math.floorMod(seed, 1_000_000L) * 1_000_000L + k * SCRATCH_BLOCKS + lbn);
                }
                delta.put((long) lbn, pbn);
            }
            s.commit(scratch, 0, SCRATCH_BLOCKS, delta);
            System.out.println("phase delete " + k);
            s.gc.deleteVolume(scratch, VolumeGate.NONE);
            System.out.println("phase reclaim-start " + k);
            long t0 = System.nanoTime();
            GcService.ReclaimReport rep = s.gc.reclaimNow(job);
            System.out.println("phase reclaim-done " + k + ": " + rep.blocksFreed() + " blocks freed in "
                    + (System.nanoTime() - t0) / 1_000_000 + " ms");
        }
    }
}
