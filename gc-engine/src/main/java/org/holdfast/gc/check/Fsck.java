package org.holdfast.gc.check;

import java.util.ArrayList;
import java.util.List;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.gc.gma.GmaFormat;

/**
 * Independent mark-and-sweep check (design.md, "the test oracle for everything above").
 *
 * <p>Mark: visit every retained snapshot's PBNs. For the volumes' newest states count mappings
 * per PBN (what RC must be); for unheld snapshots take the maximum snapshot expiry per PBN (what ET
 * must at least be once RC = 0); note PBNs of held snapshots (must be pinned). Then compare, in PBN
 * order, with the GMA after committing everything queued, and ask the data store about every
 * referenced PBN. Memory: a few primitive maps of the referenced PBNs.
 */
public final class Fsck {
    /** Sample PBNs kept per finding. */
    public static final int SAMPLE_LIMIT = 100;

    private final FsckCatalog catalog;
    private final FsckBlockStore store;
    private final BoscPipeline gma;

    public Fsck(FsckCatalog catalog, FsckBlockStore store, BoscPipeline gma) {
        this.catalog = catalog;
        this.store = store;
        this.gma = gma;
    }

    /** Runs the check against the time {@code now} (epoch ms). */
    public FsckReport run(long now) {
        return run(now, FsckProgress.NONE);
    }

    /** Runs the check against the time {@code now} (epoch ms), reporting each phase and snapshot to {@code progress}. */
    public FsckReport run(long now, FsckProgress progress) {
        progress.phase("mark: reading the PBNs of every retained snapshot");
        LongLongMap rc = new LongLongMap();
        LongLongMap required = new LongLongMap();
        LongLongMap held = new LongLongMap();
        long[] snapshots = {0};
        catalog.forEachRetainedSnapshot(s -> {
            snapshots[0]++;
            catalog.forEachPbn(s, pbn -> {
                if (pbn == 0) {
                    return;
                }
                if (s.newestState()) {
                    rc.add(pbn, 1);
                } else {
                    rc.add(pbn, 0);
                }
                if (s.held()) {
                    held.max(pbn, 1);
                } else {
                    required.max(pbn, s.expiry());
                }
            });
            progress.snapshotMarked(s);
        });
        // every referenced PBN is a key of rc (added with 0 for older snapshots)
        progress.phase("compare: " + snapshots[0] + " snapshots marked; checking the GMA against them");
        gma.commitAll();
        Acc freed = new Acc();
        Acc missing = new Acc();
        Acc corrupt = new Acc();
        Acc leaked = new Acc();
        Acc rcBad = new Acc();
        Acc etBad = new Acc();
        long[] referenced = rc.sortedKeys();
        int[] cursor = {0};
        long[] slots = {0};
        gma.gma().scan(gma.chunkLimit(), (pbn, gRc, pins, flags, expiry) -> {
            slots[0]++;
            // referenced PBNs without any GMA entry come before this one
            while (cursor[0] < referenced.length && referenced[cursor[0]] < pbn) {
                long p = referenced[cursor[0]++];
                checkReferenced(p, 0, 0, 0, Long.MIN_VALUE, rc, required, held, freed, rcBad, etBad);
            }
            boolean isReferenced = cursor[0] < referenced.length && referenced[cursor[0]] == pbn;
            if (isReferenced) {
                cursor[0]++;
                checkReferenced(pbn, gRc, pins, flags, expiry, rc, required, held, freed, rcBad, etBad);
            } else if ((flags & GmaFormat.FLAG_FREED) == 0) {
                if (gRc != 0) {
                    rcBad.add(pbn);
                } else if (pins == 0 && expiry < now) {
                    leaked.add(pbn);
                }
            }
        });
        while (cursor[0] < referenced.length) {
            long p = referenced[cursor[0]++];
            checkReferenced(p, 0, 0, 0, Long.MIN_VALUE, rc, required, held, freed, rcBad, etBad);
        }
        // stored blocks that neither the catalog nor the GMA knows
        LongLongMap known = new LongLongMap();
        gma.gma().scan(gma.chunkLimit(), (pbn, gRc, pins, flags, expiry) -> known.add(pbn, 1));
        Acc untracked = new Acc();
        store.forEachStoredPbn(p -> {
            if (p > 0 && !known.contains(p) && !rc.contains(p)) {
                untracked.add(p);
            }
        });
        progress.phase("read back: verifying the " + referenced.length + " referenced blocks in the data store");
        for (long p : referenced) {
            switch (store.state(p)) {
                case MISSING -> missing.add(p);
                case CORRUPT -> corrupt.add(p);
                default -> { }
            }
        }
        return new FsckReport(snapshots[0], referenced.length, slots[0], freed.finding(), missing.finding(),
                corrupt.finding(), leaked.finding(), rcBad.finding(), etBad.finding(), untracked.finding());
    }

    private static void checkReferenced(long pbn, int gRc, int pins, int flags, long expiry, LongLongMap rc,
            LongLongMap required, LongLongMap held, Acc freed, Acc rcBad, Acc etBad) {
        if ((flags & GmaFormat.FLAG_FREED) != 0) {
            freed.add(pbn);
        }
        long want = rc.get(pbn, 0);
        if (want != gRc) {
            rcBad.add(pbn);
        }
        if (gRc == 0 && want == 0) {
            boolean isHeld = held.contains(pbn);
            if (isHeld && pins == 0) {
                etBad.add(pbn);
            } else if (required.contains(pbn) && expiry < required.get(pbn, 0) && pins == 0) {
                etBad.add(pbn);
            }
        }
    }

    /** Count plus first samples. */
    private static final class Acc {
        long count;
        final List<Long> samples = new ArrayList<>();

        void add(long pbn) {
            count++;
            if (samples.size() < SAMPLE_LIMIT) {
                samples.add(pbn);
            }
        }

        FsckReport.Finding finding() {
            return new FsckReport.Finding(count, List.copyOf(samples));
        }
    }
}
