package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;
import org.holdfast.common.id.VolumeId;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.MapCursor;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.ingest.AgentDriver;
import org.holdfast.server.ingest.cluster.ClusterServer;
import org.holdfast.server.ingest.cluster.DataOnWorkersCluster;
import org.holdfast.server.ingest.cluster.FreedBadMarks;
import org.holdfast.server.ingest.cluster.RemoteRangeStore;
import org.holdfast.server.ingest.cluster.SharedGcCluster;
import org.holdfast.server.ingest.cluster.WorkerSweeps;
import org.holdfast.server.store.BadBlocks;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.MetadataBatch;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.actuate.health.Status;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The master's bad marks of blocks on the workers (holdfast.cluster.data=workers) once GC frees them:
 * a flipped block on a worker is marked bad by verify; while its worker still holds it the mark
 * stays, even with no sweep in between; once its snapshot is gone and a GC cycle swept the worker,
 * the mark is gone. A marked block a snapshot still references, which its worker holds, keeps its
 * mark through the same cycle; a marked block its worker freed keeps its mark while a map entry
 * references it (as after a catalog restore). On the cluster the GC test classes share ({@link SharedGcCluster}).
 */
@ExtendWith(SharedGcCluster.class)
class FreedBadMarksTest {
    private static final int BS = DataOnWorkersCluster.BS;
    private static final int BLOCKS = 16;

    private static DataOnWorkersCluster cluster;

    @BeforeAll
    static void cluster(DataOnWorkersCluster shared) {
        cluster = shared;
    }

    @Test
    void gcCycle_dropsTheMarkOfARottenBlockItsWorkerFreed_keepsMarksOfBlocksStillHeldOrReferenced() throws Exception {
        ConfigurableApplicationContext master = cluster.master();
        ClusterServer server = master.getBean(ClusterServer.class);
        BadBlocks marks = master.getBean(DataStore.class).badBlocks();
        HealthIndicator health = master.getBean("integrityHealthIndicator", HealthIndicator.class);
        cluster.gcCycle(); // the shared cluster: nothing left past the retention by another class
        byte[] a = DataOnWorkersCluster.random(41, BLOCKS);
        byte[] b = DataOnWorkersCluster.random(42, BLOCKS);
        try (AgentDriver agent = cluster.agent()) {
            agent.backup("fm-gone", a, BS, false); // raw payloads: each block's bytes lie in its worker's log as they are
            agent.backup("fm-kept", b, BS, false);
        }
        long gone = pbn(master, "fm-gone", 7);
        long kept = pbn(master, "fm-kept", 7);
        long sound = pbn(master, "fm-gone", 3); // freed by the same cycle, sound: marked by hand below
        RemoteRangeStore goneOwner = server.rangeStores().owner(gone);
        DataOnWorkersVerifyTest.flip(cluster.dir().resolve(goneOwner.name()), Arrays.copyOfRange(a, 7 * BS, 8 * BS));
        DataOnWorkersVerifyTest.flip(cluster.dir().resolve(server.rangeStores().owner(kept).name()), Arrays.copyOfRange(b, 7 * BS, 8 * BS));
        DataOnWorkersVerifyTest.verify(master, "{\"full\": true}");
        assertThat(marks.isBad(gone)).as("verify marked it").isTrue();
        assertThat(marks.isBad(kept)).as("verify marked it").isTrue();
        assertThat(health.health().getStatus().getCode()).isEqualTo("DEGRADED");

        // fm-gone's next snapshot shares no block with the first; no sweep yet: its worker still holds the rotten block
        try (AgentDriver agent = cluster.agent()) {
            agent.backup("fm-gone", DataOnWorkersCluster.random(43, BLOCKS), BS, false);
        }
        FreedBadMarks freed = new FreedBadMarks(master.getBean(WorkerSweeps.class), server.rangeStores(), marks,
                master.getBean(Catalog.class));
        String held = freed.clear(List.of(workerIdOf(goneOwner)));
        assertThat(held).as("asked its worker, which holds it").contains("0 no longer held").contains("cleared 0");
        assertThat(marks.isBad(gone)).as("never cleared while its worker holds the block").isTrue();

        Thread.sleep(50); // the grace (1 ms) of the backups' protection passes
        cluster.gcCycle(); // keep-last=1 deletes fm-gone@1; its worker frees the rotten block

        assertThat(marks.isBad(gone)).as("freed on its worker, referenced by nothing: the mark is gone").isFalse();
        assertThat(marks.isBad(kept)).as("fm-kept@1 references it and its worker holds it: the mark stays").isTrue();
        assertThat(health.health().getStatus().getCode()).isEqualTo("DEGRADED");
        assertThat(DataOnWorkersVerifyTest.json(DataOnWorkersVerifyTest.get(master, "/api/v1/verify", null)).get("badBlockCount").asInt())
                .isEqualTo(1);

        // a marked PBN its worker freed that a map entry still references (as after a catalog restore): kept until the entry goes
        Catalog catalog = master.getBean(Catalog.class);
        MetadataDb db = master.getBean(MetadataDb.class);
        long soundOwner = workerIdOf(server.rangeStores().owner(sound));
        byte[] fp = new byte[32];
        Arrays.fill(fp, (byte) 0x5a);
        assertThat(marks.mark(sound, fp, 0, "test", "marked by the test")).isTrue();
        long keptVolume = catalog.requireVolume(new VolumeId("fm-kept")).internalId();
        db.put(db.handle(MetadataDb.Column.MAP), ByteBuffer.allocate(24).putLong(keptVolume).putLong(1000).putLong(~1L).array(),
                ByteBuffer.allocate(8).putLong(sound).array());
        try {
            assertThat(freed.clear(List.of(soundOwner))).as("freed on its worker, referenced").contains(" 1 no longer held")
                    .contains(" 1 of those still referenced").contains("cleared 0");
            assertThat(marks.isBad(sound)).isTrue();
        } finally {
            try (MetadataBatch batch = new MetadataBatch()) {
                catalog.deleteMapEntry(batch, keptVolume, 1000, 1);
                catalog.write(batch);
            }
        }
        assertThat(freed.clear(List.of(soundOwner))).as("referenced by nothing now").contains("cleared 1 [" + sound + "]");
        assertThat(marks.isBad(sound)).isFalse();

        // fm-kept's content backed up again repairs it in place: no mark left, health UP (and the shared cluster clean for others)
        try (AgentDriver agent = cluster.agent()) {
            agent.backup("fm-kept", b, BS, false);
            assertThat(agent.restore("fm-kept", 1).image()).isEqualTo(b);
        }
        assertThat(marks.isEmpty()).isTrue();
        assertThat(health.health().getStatus()).isEqualTo(Status.UP);
    }

    private static long workerIdOf(RemoteRangeStore s) {
        ClusterServer server = cluster.master().getBean(ClusterServer.class);
        for (int i = 0; i < cluster.workers().size(); i++) {
            if (server.rangeStores().up(cluster.workerId(i)) == s) {
                return cluster.workerId(i);
            }
        }
        throw new AssertionError("no running worker has range store " + s.name());
    }

    /** The PBN of {@code lbn} in {@code volume}'s snapshot 1. */
    private static long pbn(ConfigurableApplicationContext master, String volume, long lbn) {
        Catalog catalog = master.getBean(Catalog.class);
        VolumeRecord v = catalog.requireVolume(new VolumeId(volume));
        try (MapCursor c = catalog.mapCursor(v.internalId())) {
            assertThat(c.seekAtOrBefore(lbn, 1)).isTrue();
            return c.pbn();
        }
    }
}
