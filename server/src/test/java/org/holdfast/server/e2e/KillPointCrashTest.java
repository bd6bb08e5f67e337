package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.kill.KillPoint;
import org.holdfast.common.kill.KillPoints;
import org.holdfast.gc.check.FsckReport;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.SnapshotRecord;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.gc.GcMetadataRebuild;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The kill-point crash loop: a child JVM ({@link KillPointChild}) runs a workload that passes every
 * registered kill point; each iteration arms one (in CI each point in turn, so every point is hit at
 * least once; beyond that random points at a random hit, or SIGKILL at a random time), and after
 * the child died there: the storage reopens (crash recovery; a GC rebuild killed between its renames
 * is run again, as the operator would), fsck is clean, every snapshot acknowledged before the crash
 * is there, and every snapshot in the catalog reads back byte-identical. Ends with the coverage
 * report and asserts that every registered point killed a child.
 *
 * <p>Iterations from {@code holdfast.crash.iterations} (at least one per point), seed from
 * {@code holdfast.crash.seed}.
 */
class KillPointCrashTest {
    /**
     * The points this workload passes; those of backend s3 ({@code objects.*}, {@code object.*}) have their
     * own suites (ObjectStoreUploadKillTest, ObjectCompactionTest, ObjectGcCrashTest).
     */
    private static final List<KillPoint> POINTS = KillPoints.all().stream().filter(p -> !p.name().startsWith("object")).toList();
    private final LogDir logs = new LogDir("KillPointCrashTest");

    @TempDir
    Path work;

    @Test
    void child_killedAtEveryNamedPointInTurn_fsckCleanEverySnapshotRestoresAndEveryPointCovered() throws Exception {
        int points = POINTS.size();
        CrashLoop loop = new CrashLoop("kill-point crash loop", points + 1);
        int iterations = Math.max(loop.iterations(), points);
        System.out.println("[e2e] kill-point crash loop runs " + iterations + " iterations (at least one per point)");
        Path root = work.resolve("stack");
        try (ReclaimStack s = ReclaimStack.open(root)) {
            assertThat(s.catalog.volumes()).isEmpty();
        }
        Set<String> acknowledged = new LinkedHashSet<>();
        CrashLoop.ChildWorkload workload = new CrashLoop.ChildWorkload() {
            @Override
            public Process start(int iteration, List<String> jvm, Path stdout, Path stderr) {
                return ChildJvm.start(KillPointChild.class.getName(), jvm, ChildJvm.serverClasspath(),
                        List.of(root.toString(), Integer.toString(iteration)), stdout, stderr);
            }

            @Override
            public boolean ready(String stdout) {
                return stdout.contains("phase commit 0");
            }
        };
        CrashLoop.KillPolicy policy = CrashLoop.KillPolicy.eachInTurn(POINTS);
        int rebuiltAfterKill = 0;
        for (int it = 1; it <= iterations; it++) {
            Path[] out = logs.next("killpoint-child-" + it);
            CrashLoop.Kill kill = loop.runChild(it, workload, it <= points ? policy : CrashLoop.KillPolicy.mixed(POINTS),
                    it <= points ? 1 : 2, 1500, 120_000, out);
            String stdout = Files.readString(out[0], StandardCharsets.UTF_8);
            stdout.lines().filter(l -> l.startsWith("committed ")).forEach(l -> acknowledged.add(l.substring(10)));
            // a deletion under way may or may not complete at the restart
            stdout.lines().filter(l -> l.startsWith("deleting ")).forEach(l -> acknowledged.removeIf(id -> id.startsWith(l.substring(9) + "@")));
            String context = "iteration " + it + ", " + kill.describe();
            System.out.println("[e2e] " + context);
            if (!Files.isDirectory(root.resolve("gc"))) {
                // killed between the rebuild's renames: the start refuses, the operator runs the rebuild again
                assertThat(kill.point()).as(context).isIn(null, KillPoints.GC_REBUILD_BETWEEN_RENAMES);
                rebuild(root);
                rebuiltAfterKill++;
            }
            try (ReclaimStack s = ReclaimStack.open(root)) {
                assertConsistent(s, acknowledged, context);
            }
            deleteReplaced(root);
        }
        String report = loop.report(POINTS::contains);
        System.out.println("[e2e] " + acknowledged.size() + " snapshots acknowledged; " + rebuiltAfterKill
                + " rebuilds re-run after a kill between the renames");
        assertThat(loop.uncovered(POINTS::contains)).as(report).isEmpty();
    }

    private static void assertConsistent(ReclaimStack s, Set<String> acknowledged, String context) {
        FsckReport f = s.gc.fsck();
        assertThat(f.clean()).as(context + "\n" + f.toText()).isTrue();
        Set<String> present = new LinkedHashSet<>();
        for (VolumeRecord v : s.catalog.volumes()) {
            for (SnapshotRecord snap : s.catalog.snapshots(v.name())) {
                String id = v.name().name() + "@" + snap.sequence();
                present.add(id);
                int blocks = (int) (snap.volumeBytes() / ReclaimStack.BS);
                long[] contents = new long[blocks];
                for (int lbn = 0; lbn < blocks; lbn++) {
                    contents[lbn] = KillPointChild.content(v.name().name(), lbn);
                }
                s.assertRestores(new VolumeId(v.name().name()), snap.sequence(), contents);
            }
        }
        assertThat(present).as(context + ": every acknowledged snapshot survives").containsAll(acknowledged);
        assertThat(f.snapshotsChecked()).as(context).isEqualTo(present.size());
    }

    private static void rebuild(Path root) {
        try (MetadataDb db = MetadataDb.open(root.resolve("catalog"))) {
            new GcMetadataRebuild(root, new Catalog(db), new GcMetadataRebuild.Settings(Duration.ofHours(1), 1), Clock.systemUTC(),
                    line -> { }).run();
        }
    }

    private static void deleteReplaced(Path root) throws Exception {
        try (Stream<Path> s = Files.list(root)) {
            for (Path p : s.filter(p -> p.getFileName().toString().startsWith(GcMetadataRebuild.REPLACED_PREFIX)).toList()) {
                try (Stream<Path> t = Files.walk(p)) {
                    t.sorted(java.util.Comparator.reverseOrder()).forEach(q -> q.toFile().delete());
                }
            }
        }
    }
}
