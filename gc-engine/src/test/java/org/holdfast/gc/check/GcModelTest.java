package org.holdfast.gc.check;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Consumer;
import java.util.function.LongConsumer;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.model.DeltaEntry;
import org.holdfast.gc.GcHarness;
import org.holdfast.gc.MutableClock;
import org.holdfast.gc.bookkeeping.GcOperation;
import org.holdfast.gc.retention.ExpiryCalculator;
import org.holdfast.gc.retention.RangeMaxExpiry;
import org.holdfast.gc.retention.RetentionPlanner;
import org.holdfast.gc.retention.RetentionPolicy;
import org.holdfast.gc.sweep.SweepReport;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * The GC against a simple reference model: many volumes with mixed policies, hundreds of
 * snapshots, duplicates across volumes, early deletions, holds, policy changes, keep-last pins,
 * abandoned backups, simulated crashes with re-drive, and sweeps, on a simulated clock. After every
 * step the independent fsck must find no referenced-but-freed or missing block and no RC/ET
 * disagreement; after every sweep, no block leaked past its expiry.
 */
class GcModelTest {
    private static final long HOUR = 3_600_000L;
    private static final String[] POLICIES = {"2d", "7d", "30d", "keep-last=3,daily=3", "daily=7,weekly=2",
        "keep-last=5", "keep-last=2,daily=2,weekly=1,monthly=1", "12h"};

    @TempDir
    Path dir;

    private static final class Snap {
        long seq;
        long created;
        long expiry;
        long[] map;
        boolean held;
        boolean keepLastPinned;
    }

    private static final class Vol {
        VolumeId id;
        long[] cur;
        long[] birth;
        RetentionPolicy policy;
        final TreeMap<Long, Snap> snaps = new TreeMap<>();
        final RangeMaxExpiry expiries = new RangeMaxExpiry();
        final List<Long> history = new ArrayList<>();
        long seq;
    }

    /** A logged operation, replayable after a crash. */
    private record Journal(long id, Vol vol, long seq, List<DeltaEntry> delta, GcOperation other) {
    }

    private final List<Vol> vols = new ArrayList<>();
    private final Set<Long> dataStore = new HashSet<>();
    private final List<Long> stored = new ArrayList<>();
    private final List<Journal> journal = new ArrayList<>();
    private final ExpiryCalculator calc = new ExpiryCalculator();
    private final RetentionPlanner planner = new RetentionPlanner();
    private long nextPbn = 1;
    private long opId;
    private GcHarness h;

    private long apply(GcOperation op, Vol v, long seq, List<DeltaEntry> delta) {
        opId++;
        journal.add(new Journal(opId, v, seq, delta, op));
        h.bookkeeper.apply(opId, op);
        return opId;
    }

    @ParameterizedTest
    @ValueSource(longs = {11, 22, 33})
    void randomHistory_fsckFindsNoLossAndNoLeakAfterSweep(long seed) {
        Random r = new Random(seed);
        MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z").toEpochMilli());
        h = new GcHarness(dir, clock);
        int[] sizes = {20, 60, 150, 400, 40, 250};
        for (int i = 0; i < sizes.length; i++) {
            Vol v = new Vol();
            v.id = new VolumeId("vol" + i);
            v.cur = new long[sizes[i]];
            v.birth = new long[sizes[i]];
            v.policy = RetentionPolicy.parse(POLICIES[r.nextInt(POLICIES.length)]);
            vols.add(v);
        }
        long commits = 0;
        long crashes = 0;
        long holds = 0;
        long dups = 0;
        long freed = 0;
        long sweeps = 0;
        long extensions = 0;
        try {
            for (int step = 0; step < 400; step++) {
                clock.advance(Duration.ofMillis(HOUR + r.nextInt((int) (7 * HOUR))));
                int a = r.nextInt(100);
                if (a < 50) {
                    dups += backup(vols.get(r.nextInt(vols.size())), r, clock.millis());
                    commits++;
                } else if (a < 70) {
                    SweepReport rep = cycle(clock.millis());
                    sweeps++;
                    freed += rep.freed();
                    FsckReport f = fsck(clock.millis());
                    assertThat(f.leakedPastExpiry().count()).as("leak after sweep, step %d\n%s", step, f.toText()).isZero();
                } else if (a < 75) {
                    earlyDelete(r);
                } else if (a < 82) {
                    holds += toggleHold(r);
                } else if (a < 87) {
                    extensions += changePolicy(vols.get(r.nextInt(vols.size())), r);
                } else if (a < 92) {
                    abandonedBackup(r);
                } else if (a < 96) {
                    h.crash();
                    redrive();
                    crashes++;
                } else {
                        cycle(clock.millis());
                    sweeps++;
                }
                FsckReport f = fsck(clock.millis());
                assertThat(f.dataLoss()).as("data loss at step %d\n%s", step, f.toText()).isFalse();
                assertThat(f.bookkeepingErrors()).as("bookkeeping at step %d\n%s", step, f.toText()).isFalse();
                assertThat(f.untracked().count()).as("untracked at step %d\n%s", step, f.toText()).isZero();
            }
            // let everything expire except the volumes' newest states: the GMA must shrink to them
            clock.advance(Duration.ofDays(800));
            for (Vol v : vols) {
                for (Snap s : v.snaps.values()) {
                    if (s.held) {
                        s.held = false;
                        apply(new GcOperation.Unpin(s.map.clone()), null, 0, null);
                    }
                }
            }
            cycle(clock.millis());
            FsckReport end = fsck(clock.millis());
            assertThat(end.clean()).as(end.toText()).isTrue();
            for (Vol v : vols) {
                assertThat(v.snaps.size()).isLessThanOrEqualTo(Math.max(1, v.policy.keepLast()));
            }
        } finally {
            h.close();
        }
        assertThat(commits).isGreaterThan(100);
        assertThat(freed).isGreaterThan(0);
        assertThat(crashes + holds + dups + sweeps + extensions).isGreaterThan(0);
        System.out.printf("seed %d: commits %d, sweeps %d, freed %d, crashes %d, holds %d, dups %d, "
                + "extensions %d, keep-last pins %d, GMA updates logged %d%n", seed, commits, sweeps, freed, crashes,
                holds, dups, extensions, keepLastPins, h.pipeline.updatesLogged());
        assertThat(crashes).isGreaterThan(0);
        assertThat(dups).isGreaterThan(0);
    }

    private long backup(Vol v, Random r, long now) {
        int k = 1 + r.nextInt(Math.max(1, v.cur.length / 4));
        int[] lbns = r.ints(0, v.cur.length).distinct().limit(k).toArray();
        long seq = v.seq + 1;
        List<DeltaEntry> delta = new ArrayList<>();
        long dups = 0;
        for (int l : lbns) {
            long p;
            int c = r.nextInt(100);
            if (c < 10) {
                p = 0;
            } else if (c < 40 && !stored.isEmpty()) {
                p = stored.get(r.nextInt(stored.size()));
                if (!dataStore.contains(p) || !h.guard.protect(p)) {
                    p = fresh();
                } else {
                    dups++;
                }
            } else {
                p = fresh();
            }
            if (p == v.cur[l]) {
                continue;
            }
            delta.add(new DeltaEntry(l, v.cur[l], v.cur[l] == 0 ? 0 : v.birth[l], p));
        }
        for (DeltaEntry e : delta) {
            v.cur[(int) e.lbn()] = e.newPbn();
            v.birth[(int) e.lbn()] = seq;
        }
        long expiry = calc.expiryOf(v.policy, now, v.history);
        // catalog commit first (the model state above), then the GC operation
        v.seq = seq;
        apply(new GcOperation.Commit(v.id, seq, delta, v.expiries), v, seq, delta);
        v.expiries.append(seq, expiry);
        v.history.add(now);
        Snap s = new Snap();
        s.seq = seq;
        s.created = now;
        s.expiry = expiry;
        s.map = v.cur.clone();
        v.snaps.put(seq, s);
        return dups;
    }

    private long fresh() {
        long p = nextPbn++;
        dataStore.add(p);
        stored.add(p);
        if (!h.guard.protect(p)) {
            throw new AssertionError("a new PBN cannot be tombstoned");
        }
        return p;
    }

    private void abandonedBackup(Random r) {
        for (int i = 0; i < 1 + r.nextInt(5); i++) {
            fresh();
        }
        if (!stored.isEmpty()) {
            long p = stored.get(r.nextInt(stored.size()));
            if (dataStore.contains(p)) {
                h.guard.protect(p);
            }
        }
    }

    private SweepReport cycle(long now) {
        for (Vol v : vols) {
            List<RetentionPlanner.SnapshotState> states = new ArrayList<>();
            for (Snap s : v.snaps.values()) {
                states.add(new RetentionPlanner.SnapshotState(s.seq, s.expiry, s.held, s.keepLastPinned));
            }
            RetentionPlanner.Plan plan = planner.plan(states, v.policy.keepLast(), now);
            for (long seq : plan.delete()) {
                Snap s = v.snaps.get(seq);
                assertThat(s.expiry).isLessThan(now);
                v.snaps.remove(seq);
                v.expiries.remove(seq);
            }
            for (long seq : plan.releaseKeepLastPin()) {
                Snap s = plan.delete().contains(seq) ? null : v.snaps.get(seq);
                long[] pbns = findPinned(v, seq, s);
                apply(new GcOperation.Unpin(pbns), null, 0, null);
                if (s != null) {
                    s.keepLastPinned = false;
                }
            }
            for (long seq : plan.pinForKeepLast()) {
                Snap s = v.snaps.get(seq);
                apply(new GcOperation.Pin(s.map.clone()), null, 0, null);
                s.keepLastPinned = true;
                pinnedMaps.put(v.id + "@" + seq, s.map.clone());
                keepLastPins++;
            }
        }
        SweepReport rep = h.sweeper.sweep(now);
        synchronized (h.reclaimed) {
            for (long p : h.reclaimed) {
                dataStore.remove(p);
            }
            h.reclaimed.clear();
        }
        return rep;
    }

    private final Map<String, long[]> pinnedMaps = new java.util.HashMap<>();
    private long keepLastPins;

    private long[] findPinned(Vol v, long seq, Snap s) {
        long[] m = pinnedMaps.remove(v.id + "@" + seq);
        if (m == null) {
            throw new AssertionError("no keep-last pin recorded for " + v.id + "@" + seq);
        }
        return m;
    }

    private void earlyDelete(Random r) {
        Vol v = vols.get(r.nextInt(vols.size()));
        if (v.snaps.size() < 2) {
            return;
        }
        List<Snap> cands = new ArrayList<>();
        for (Snap s : v.snaps.headMap(v.snaps.lastKey(), false).values()) {
            if (!s.held && !s.keepLastPinned) {
                cands.add(s);
            }
        }
        if (!cands.isEmpty()) {
            Snap s = cands.get(r.nextInt(cands.size()));
            v.snaps.remove(s.seq);
            v.expiries.remove(s.seq);
        }
    }

    private long toggleHold(Random r) {
        Vol v = vols.get(r.nextInt(vols.size()));
        if (v.snaps.isEmpty()) {
            return 0;
        }
        List<Snap> all = new ArrayList<>(v.snaps.values());
        Snap s = all.get(r.nextInt(all.size()));
        if (s.held) {
            s.held = false;
            apply(new GcOperation.Unpin(s.map.clone()), null, 0, null);
            return 0;
        }
        s.held = true;
        apply(new GcOperation.Pin(s.map.clone()), null, 0, null);
        return 1;
    }

    private long changePolicy(Vol v, Random r) {
        RetentionPolicy np = RetentionPolicy.parse(POLICIES[r.nextInt(POLICIES.length)]);
        v.policy = np;
        long ext = 0;
        // recompute every retained snapshot's expiry under the new policy; only extensions matter
        List<Long> earlier = new ArrayList<>();
        int hi = 0;
        for (Snap s : v.snaps.values()) {
            while (hi < v.history.size() && v.history.get(hi) < s.created) {
                earlier.add(v.history.get(hi++));
            }
            long e = calc.expiryOf(np, s.created, earlier);
            if (e > s.expiry) {
                apply(new GcOperation.RaiseExpiry(s.map.clone(), e), null, 0, null);
                s.expiry = e;
                v.expiries.setExpiry(s.seq, e);
                ext++;
            }
        }
        return ext;
    }

    private long orphanScanFrom = 1;

    private void redrive() {
        // as the server does at start: blocks stored since the last start may have lost their
        // protection record in the crash; protect them again so that a sweep can find them
        for (long p : dataStore) {
            if (p >= orphanScanFrom) {
                assertThat(h.guard.protect(p)).isTrue();
            }
        }
        orphanScanFrom = nextPbn;
        long last = h.bookkeeper.lastAppliedOp();
        for (Journal j : journal) {
            if (j.id() <= last) {
                continue;
            }
            GcOperation op = j.vol() == null ? j.other()
                    : new GcOperation.Commit(j.vol().id, j.seq(), j.delta(), j.vol().expiries);
            assertThat(h.bookkeeper.apply(j.id(), op)).isTrue();
        }
        assertThat(h.bookkeeper.lastAppliedOp()).isEqualTo(opId);
    }

    private FsckReport fsck(long now) {
        FsckCatalog catalog = new FsckCatalog() {
            @Override
            public void forEachRetainedSnapshot(Consumer<RetainedSnapshot> visitor) {
                for (Vol v : vols) {
                    for (Snap s : v.snaps.values()) {
                        visitor.accept(new RetainedSnapshot(v.id, s.seq, s.expiry, s.held || s.keepLastPinned,
                                s.seq == v.seq));
                    }
                }
            }

            @Override
            public void forEachPbn(RetainedSnapshot snapshot, LongConsumer sink) {
                Vol v = vols.stream().filter(x -> x.id.equals(snapshot.volume())).findFirst().orElseThrow();
                Arrays.stream(v.snaps.get(snapshot.sequence()).map).forEach(sink::accept);
            }
        };
        FsckBlockStore blocks = new FsckBlockStore() {
            @Override
            public BlockState state(long pbn) {
                return dataStore.contains(pbn) ? BlockState.PRESENT : BlockState.MISSING;
            }

            @Override
            public void forEachStoredPbn(LongConsumer visitor) {
                dataStore.stream().sorted().forEach(visitor::accept);
            }
        };
        return new Fsck(catalog, blocks, h.pipeline).run(now);
    }
}
