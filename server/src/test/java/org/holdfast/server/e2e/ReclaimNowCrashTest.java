package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.kill.KillPoint;
import org.holdfast.common.kill.KillPoints;
import org.holdfast.gc.check.FsckReport;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.gc.GcService;
import org.holdfast.server.gc.VolumeGate;
import org.holdfast.server.jobs.JobContext;
import org.holdfast.server.store.StoredBlock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * SIGKILL during reclaim-now (issue #11). A child JVM ({@link ReclaimNowChild}) opens the storage
 * stack and makes and reclaims garbage in a loop: scratch volumes that share blocks with the retained
 * volumes, their deletion, reclaim-now. The test kills it at a random moment after a random
 * reclaim-now began (its mark, a free batch, the compaction after it), reopens the stack in this JVM
 * and checks: fsck clean, every retained snapshot (held ones included) reads back exactly. Between
 * kills it adds snapshots and deletes old ones and whole volumes, so each run has new garbage that
 * shares blocks with what is kept. At the end one reclaim-now runs to completion: the store then
 * holds exactly the blocks fsck's mark references.
 *
 * <p>Iterations from {@code holdfast.crash.iterations} (5 by default, 100 with -Pslow); seed from
 * {@code holdfast.crash.seed} (printed).
 */
class ReclaimNowCrashTest {
    private static final int BLOCKS = 512;
    private static final int VOLUMES = 3;

    private final LogDir logs = new LogDir("ReclaimNowCrashTest");

    @TempDir
    Path work;

    // the model: every retained snapshot's content ids per LBN (0: zero block)
    private final Map<String, TreeMap<Long, long[]>> snapshots = new LinkedHashMap<>();
    private final Map<Long, Long> pbnOfContent = new HashMap<>();
    private final List<Long> contents = new ArrayList<>();
    private long nextContent = 1;

    /** The named points this child passes without leaving a volume the model does not know (it never commits a keep- volume). */
    private static final List<KillPoint> POINTS = List.of(KillPoints.RECLAIM_AFTER_FREE_BATCH,
            KillPoints.GC_DELETE_VOLUME_AFTER_CATALOG_BATCH, KillPoints.GC_DELETE_VOLUME_AFTER_GC_LOG);

    @Test
    void child_killedDuringReclaimNow_fsckCleanAndEveryRetainedSnapshotRestores() throws Exception {
        CrashLoop loop = new CrashLoop("reclaim-now crash loop", 5);
        int iterations = loop.iterations();
        long seed = loop.seed();
        Random random = loop.random();
        Path root = work.resolve("stack");
        try (ReclaimStack s = ReclaimStack.open(root)) {
            for (int v = 0; v < VOLUMES; v++) {
                backup(s, random, "keep-" + v, BLOCKS);
            }
            s.gc.placeHold(new VolumeId("keep-0"), 1); // a held snapshot's blocks must survive every reclaim
        }
        int inMark = 0;
        int inFree = 0;
        int inCompaction = 0;
        int elsewhere = 0;
        long freedInChild = 0;
        for (int it = 1; it <= iterations; it++) {
            try (ReclaimStack s = ReclaimStack.open(root)) {
                change(s, random, it);
            }
            Path[] out = logs.next("reclaim-child-" + it);
            long childSeed = seed + it;
            // odd iterations: kill 0-500 ms into the first or second reclaim-now of this child (a cold one takes about
            // 600 ms here); even ones: halt at a named point the child passes (its first or second hit)
            int target = 1 + random.nextInt(2);
            CrashLoop.ChildWorkload workload = new CrashLoop.ChildWorkload() {
                @Override
                public Process start(int iteration, List<String> jvm, Path stdout, Path stderr) {
                    return ChildJvm.start(ReclaimNowChild.class.getName(), jvm, ChildJvm.serverClasspath(),
                            List.of(root.toString(), Long.toString(childSeed)), stdout, stderr);
                }

                @Override
                public boolean ready(String stdout) {
                    return count(stdout, "phase reclaim-start") >= target;
                }
            };
            // iteration 2 always halts in reclaim-now's free step, so the loop surely has a kill inside a reclaim-now
            CrashLoop.KillPolicy policy = it % 2 == 1 ? CrashLoop.KillPolicy.randomTime()
                    : it == 2 ? (i, r) -> KillPoints.RECLAIM_AFTER_FREE_BATCH : (i, r) -> POINTS.get(r.nextInt(POINTS.size()));
            CrashLoop.Kill kill = loop.runChild(it, workload, policy, 2, 500, 60_000, out);
            String stdout = Files.readString(out[0]);
            if (!stdout.contains("phase ")) {
                throw new AssertionError("iteration " + it + ": the child never started a phase (" + kill.describe() + ")");
            }
            String last = stdout.substring(stdout.lastIndexOf("phase "));
            freedInChild += count(out[0], "batch freed");
            if (last.startsWith("phase reclaim-start")) {
                if (last.contains("reclaim-now: freed")) {
                    inCompaction++;
                } else if (last.contains("blocks live")) {
                    inFree++;
                } else {
                    inMark++;
                }
            } else {
                elsewhere++;
            }
            try (ReclaimStack s = ReclaimStack.open(root)) {
                String context = "after kill " + it + " (" + kill.describe() + ", " + last.lines().findFirst().orElse("") + ")";
                // a kill between a scratch volume's commit and its deletion leaves it whole (deletion is atomic):
                // fsck must count its snapshots, then the deletion is finished as an operator would retry it
                List<VolumeRecord> leftovers = s.catalog.volumes().stream().filter(v -> v.name().name().startsWith("scratch-")).toList();
                long leftoverSnapshots = leftovers.stream().mapToLong(v -> s.catalog.snapshots(v).size()).sum();
                assertThat(leftovers.size()).as(context + ": scratch volumes left (only the one being deleted)").isLessThanOrEqualTo(1);
                assertConsistent(s, context, leftoverSnapshots);
                for (VolumeRecord v : leftovers) {
                    s.gc.deleteVolume(v.name(), VolumeGate.NONE);
                }
                if (!leftovers.isEmpty()) {
                    assertConsistent(s, context + ", after finishing the scratch volume's deletion", 0);
                }
            }
        }
        try (ReclaimStack s = ReclaimStack.open(root)) {
            GcService.ReclaimReport rep = s.gc.reclaimNow(JobContext.NONE);
            System.out.println("[e2e] final reclaim-now: " + rep);
            FsckReport f = assertConsistent(s, "after the final reclaim-now", 0);
            assertThat(s.storedBlocks()).as("stored blocks = blocks the checker's mark references").isEqualTo(f.referencedPbns());
        }
        System.out.printf("[e2e] reclaim-now crash loop done: %d kills during the mark, %d during the free (%d batches freed"
                + " in children), %d during the compaction after it, %d elsewhere%n", inMark, inFree, freedInChild, inCompaction, elsewhere);
        loop.report(POINTS::contains);
        assertThat(inMark + inFree + inCompaction).as("kills that landed during reclaim-now").isPositive();
    }

    /** fsck clean (nothing lost, no leak, nothing untracked) and every retained snapshot reads back exactly. */
    private FsckReport assertConsistent(ReclaimStack s, String context, long leftoverSnapshots) {
        FsckReport f = s.gc.fsck();
        assertThat(f.clean()).as(context + "\n" + f.toText()).isTrue();
        long expected = snapshots.values().stream().mapToLong(TreeMap::size).sum() + leftoverSnapshots;
        assertThat(f.snapshotsChecked()).as(context).isEqualTo(expected);
        for (Map.Entry<String, TreeMap<Long, long[]>> v : snapshots.entrySet()) {
            for (Map.Entry<Long, long[]> snap : v.getValue().entrySet()) {
                s.assertRestores(new VolumeId(v.getKey()), snap.getKey(), snap.getValue());
            }
        }
        return f;
    }

    /** Between kills: a new snapshot of one volume, an early deletion of an old snapshot, a short-lived volume. */
    private void change(ReclaimStack s, Random r, int it) {
        String name = "keep-" + r.nextInt(VOLUMES);
        backup(s, r, name, 48);
        TreeMap<Long, long[]> snaps = snapshots.get(name);
        if (snaps.size() > 2) {
            long victim = snaps.keySet().stream().skip(1).findFirst().orElseThrow(); // keep-0@1 is held: skip the first
            s.gc.deleteSnapshot(new VolumeId(name), victim);
            snaps.remove(victim);
        }
        String temp = "temp-" + it;
        backup(s, r, temp, BLOCKS);
        s.gc.deleteVolume(new VolumeId(temp), VolumeGate.NONE);
        snapshots.remove(temp);
    }

    /** A snapshot of {@code name} changing {@code changes} random LBNs (all, for a new volume): new content or duplicates. */
    private void backup(ReclaimStack s, Random r, String name, int changes) {
        TreeMap<Long, long[]> snaps = snapshots.computeIfAbsent(name, n -> new TreeMap<>());
        long[] current = snaps.isEmpty() ? new long[BLOCKS] : snaps.lastEntry().getValue().clone();
        TreeMap<Long, Long> delta = new TreeMap<>();
        for (int i = 0; i < changes; i++) {
            int lbn = changes == BLOCKS ? i : r.nextInt(BLOCKS);
            long content;
            int k = r.nextInt(10);
            if (k == 0) {
                content = 0;
            } else if (k < 4 && !contents.isEmpty()) {
                content = contents.get(r.nextInt(contents.size()));
            } else {
                content = nextContent++;
                contents.add(content);
            }
            long pbn = 0;
            if (content != 0) {
                Long known = pbnOfContent.get(content);
                if (known != null && s.store.fingerprint(known, new StoredBlock()) && s.gc.guard().protect(known)) {
                    pbn = known;
                } else {
                    pbn = s.storeBlock(content);
                    pbnOfContent.put(content, pbn);
                }
            }
            delta.put((long) lbn, pbn);
            current[lbn] = content;
        }
        long parent = snaps.isEmpty() ? 0 : snaps.lastKey();
        long seq = s.commit(new VolumeId(name), parent, BLOCKS, delta);
        snaps.put(seq, current);
    }

    private static int count(Path file, String what) throws java.io.IOException {
        return Files.exists(file) ? count(Files.readString(file), what) : 0;
    }

    private static int count(String text, String what) {
        int n = 0;
        for (int i = text.indexOf(what); i >= 0; i = text.indexOf(what, i + 1)) {
            n++;
        }
        return n;
    }
}
