package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.id.VolumeId;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.MapCursor;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.gc.GcService;
import org.holdfast.server.gc.VolumeGate;
import org.holdfast.server.ingest.AgentDriver;
import org.holdfast.server.ingest.cluster.ClusterServer;
import org.holdfast.server.ingest.cluster.DataOnWorkersCluster;
import org.holdfast.server.ingest.cluster.FreedBadMarks;
import org.holdfast.server.ingest.cluster.SharedGcCluster;
import org.holdfast.server.ingest.cluster.WorkerSweeps;
import org.holdfast.server.store.BadBlocks;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.MetadataBatch;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The check of freed bad marks with 5,000 marks (as after a catalog restore), on the cluster the GC
 * test classes share ({@link SharedGcCluster}): marks on blocks a snapshot references and its worker
 * holds, on blocks the workers freed (some of them still named by a map entry, as a restored catalog
 * does), and on PBNs no worker ever handed out (the worker fails those reads). One check clears
 * exactly the freed, unreferenced ones and keeps every other mark.
 *
 * <p>Measured on the loaded 2-core test machine (load average 15 to 17, master and workers in one
 * JVM): the check of 5,000 marks (then 1,000 held, 1,500 freed, 2,500 never handed out) took 4.1 s
 * before, 4.5 s after, most of it the workers' failed reads of the never handed out PBNs (each
 * logged) and the sound reads of held blocks, on a CPU-bound machine. The asking
 * alone, 2,000 freed PBNs on one worker, three rounds each: one DATA_READ at a time 311 to 859 ms
 * (median about 720), 64 in flight ({@code NotHeldProbe}) 186 to 785 ms (median about 340); on a
 * real network each round trip saved is a network round trip. The one pass over the maps for all
 * marks replaced nothing slower: the check read the maps once before too.
 */
@ExtendWith(SharedGcCluster.class)
class FreedBadMarksScaleTest {
    private static final int BS = DataOnWorkersCluster.BS;
    private static final int KEPT = 500;
    private static final int GONE = 1000;
    private static final int REFERENCED = 100; // of GONE's freed blocks, named again by a map entry
    private static final int UNISSUED = 3500; // PBNs no worker handed out

    private static DataOnWorkersCluster cluster;

    @BeforeAll
    static void cluster(DataOnWorkersCluster shared) {
        cluster = shared;
    }

    @Test
    void fiveThousandMarks_oneCheckClearsExactlyTheFreedUnreferencedOnes() throws Exception {
        ConfigurableApplicationContext master = cluster.master();
        ClusterServer server = master.getBean(ClusterServer.class);
        BadBlocks marks = master.getBean(DataStore.class).badBlocks();
        Catalog catalog = master.getBean(Catalog.class);
        MetadataDb db = master.getBean(MetadataDb.class);
        cluster.gcCycle(); // the shared cluster: nothing left past the retention by another class
        try (AgentDriver agent = cluster.agent()) {
            agent.backup("fs-kept", DataOnWorkersCluster.random(61, KEPT), BS, false);
            agent.backup("fs-gone", DataOnWorkersCluster.random(62, GONE), BS, false);
        }
        long[] kept = pbns(catalog, "fs-kept", KEPT);
        long[] gone = pbns(catalog, "fs-gone", GONE);
        long keptVolume = catalog.requireVolume(new VolumeId("fs-kept")).internalId();
        GcService gc = master.getBean(GcService.class);
        gc.deleteVolume(new VolumeId("fs-gone"), VolumeGate.NONE);
        cluster.awaitDeltasDelivered();
        Thread.sleep(50); // the backups' grace (1 ms) passes
        cluster.gcCycle(); // both workers free fs-gone's blocks

        List<Long> swept = List.of(cluster.workerId(0), cluster.workerId(1));
        List<Long> unissued = new ArrayList<>();
        for (long id : swept) {
            PbnRange r = server.rangeStores().up(id).range();
            for (int i = 1; i <= UNISSUED / 2; i++) {
                unissued.add(r.limit() - i);
            }
        }
        List<BadBlocks.Mark> all = new ArrayList<>();
        Arrays.stream(kept).forEach(p -> all.add(mark(p)));
        Arrays.stream(gone).forEach(p -> all.add(mark(p)));
        unissued.forEach(p -> all.add(mark(p)));
        assertThat(marks.markAll(all)).isEqualTo(KEPT + GONE + UNISSUED);
        Set<Long> referenced = new HashSet<>();
        try (MetadataBatch batch = new MetadataBatch()) {
            for (int i = 0; i < REFERENCED; i++) { // as a restored catalog names blocks its workers freed after the backup
                long pbn = gone[i * (GONE / REFERENCED)];
                referenced.add(pbn);
                db.put(batch, db.handle(MetadataDb.Column.MAP), ByteBuffer.allocate(24).putLong(keptVolume).putLong(100_000 + i)
                        .putLong(~1L).array(), ByteBuffer.allocate(8).putLong(pbn).array());
            }
            db.write(batch, true);
        }
        try {
            FreedBadMarks freed = new FreedBadMarks(master.getBean(WorkerSweeps.class), server.rangeStores(), marks, catalog);
            long t0 = System.nanoTime();
            String line = freed.clear(swept);
            long ms = (System.nanoTime() - t0) / 1_000_000;
            System.out.println("FreedBadMarksScaleTest: the check of " + all.size() + " marks took " + ms + " ms: " + line.substring(0, Math.min(200, line.length())));
            assertThat(line).contains(": " + all.size() + " in the swept workers' ranges, " + GONE + " no longer held there, "
                    + REFERENCED + " of those still referenced by a snapshot (kept); cleared " + (GONE - REFERENCED));
            for (long p : gone) {
                assertThat(marks.isBad(p)).as("PBN %d: freed; referenced %s", p, referenced.contains(p)).isEqualTo(referenced.contains(p));
            }
            assertThat(Arrays.stream(kept).allMatch(marks::isBad)).as("held by their workers and referenced: kept").isTrue();
            assertThat(unissued.stream().allMatch(marks::isBad)).as("their workers failed the reads: kept").isTrue();
            assertThat(marks.count()).isEqualTo(KEPT + UNISSUED + REFERENCED);
        } finally {
            // the shared cluster clean for the other classes: no map entry of the test's, no mark, fs-kept deleted
            try (MetadataBatch batch = new MetadataBatch()) {
                for (int i = 0; i < REFERENCED; i++) {
                    catalog.deleteMapEntry(batch, keptVolume, 100_000 + i, 1);
                }
                catalog.write(batch);
            }
            marks.clearFreed(marks.all().stream().map(BadBlocks.BadBlock::pbn).toList());
            gc.deleteVolume(new VolumeId("fs-kept"), VolumeGate.NONE);
        }
    }

    private static BadBlocks.Mark mark(long pbn) {
        byte[] fp = ByteBuffer.allocate(32).putLong(0x6d61726b73L).putLong(pbn).array(); // one of its own each: no real block's
        return new BadBlocks.Mark(pbn, fp, "test", "marked by the test");
    }

    /** The PBNs of {@code volume}'s snapshot 1, in LBN order. */
    private static long[] pbns(Catalog catalog, String volume, int n) {
        VolumeRecord v = catalog.requireVolume(new VolumeId(volume));
        long[] out = new long[n];
        try (MapCursor c = catalog.mapCursor(v.internalId())) {
            c.startScan(1, 0, n);
            while (c.nextMapped()) {
                out[(int) c.lbn()] = c.pbn();
            }
        }
        assertThat(out).doesNotContain(0L);
        return out;
    }
}
