package org.holdfast.server.volumes;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Clock;
import org.holdfast.common.id.VolumeId;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.CommitHook;
import org.holdfast.server.catalog.SessionMap;
import org.holdfast.server.catalog.SnapshotCommit;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.store.LocationIndex;
import org.holdfast.server.store.MetadataBatch;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Usage figures from a real catalog: which blocks retained snapshots see, which are shared, what the cache keeps. */
class VolumeUsageTest {
    private static final int BS = 4096;
    private static final VolumeId A = new VolumeId("a");
    private static final VolumeId B = new VolumeId("b");
    private static final VolumeId C = new VolumeId("c");

    @TempDir
    Path dir;
    private MetadataDb db;
    private Catalog catalog;
    private SnapshotCommit commit;
    private LocationIndex locations;

    @BeforeEach
    void open() {
        db = MetadataDb.open(dir);
        catalog = new Catalog(db);
        commit = new SnapshotCommit(catalog, CommitHook.NONE, Clock.systemUTC());
        locations = new LocationIndex(db);
        try (MetadataBatch b = new MetadataBatch()) {
            for (long pbn = 1; pbn <= 9; pbn++) {
                // stored length 100 x PBN: a sum names the blocks it counted
                locations.put(b, pbn, 0, pbn * 1000, (int) (100 * pbn), new byte[32], 0);
            }
            db.write(b, true);
        }
    }

    @AfterEach
    void close() {
        db.close();
    }

    private void commit(VolumeId v, String domain, long parent, long blocks, long... lbnPbn) {
        SessionMap m = new SessionMap(4);
        for (int i = 0; i < lbnPbn.length; i += 2) {
            m.add(lbnPbn[i], lbnPbn[i + 1]);
        }
        commit.commit(new SnapshotCommit.Request(v, BS, blocks * BS, parent, m, m.size() * (long) BS, m.size(), m.size(), 0, domain));
    }

    private VolumeRecord volume(VolumeId v) {
        return catalog.requireVolume(v);
    }

    @Test
    void of_snapshotDeletedButMapNotPruned_blocksOnlyItSawNotCounted() {
        commit(A, "default", 0, 2, 0, 1, 1, 2);   // A@1: 1, 2
        commit(A, "default", 1, 2, 0, 3, 1, 2);   // A@2: 3, 2
        commit(A, "default", 2, 2, 0, 4, 1, 2);   // A@3: 4, 2
        VolumeUsage usage = new VolumeUsage(catalog, locations);
        assertThat(usage.of(volume(A))).isEqualTo(new VolumeUsage.Usage(400L + 200, 100L + 200 + 300 + 400, 100L + 200 + 300 + 400));

        try (MetadataBatch b = new MetadataBatch()) {
            catalog.deleteSnapshot(b, volume(A), 2); // the entry of PBN 3 stays in the map until pruned
            catalog.write(b);
        }
        assertThat(usage.of(volume(A))).as("recomputed: the retained set changed")
                .isEqualTo(new VolumeUsage.Usage(600L, 100L + 200 + 400, 100L + 200 + 400));
    }

    @Test
    void of_blocksSharedWithinTheDomain_notUnique_andTheCacheFollowsCommits() {
        commit(A, "default", 0, 2, 0, 1, 1, 2);   // A: 1, 2
        commit(B, "default", 0, 2, 0, 2, 1, 5);   // B: 2, 5
        commit(C, "tenant", 0, 1, 0, 1);          // C shares nothing across domains, whatever its PBNs
        VolumeUsage usage = new VolumeUsage(catalog, locations);
        assertThat(usage.of(volume(A))).isEqualTo(new VolumeUsage.Usage(300L, 300L, 100L));
        assertThat(usage.of(volume(B)).uniqueBytes()).isEqualTo(500L);
        assertThat(usage.of(volume(C)).uniqueBytes()).isEqualTo(100L);

        commit(B, "default", 1, 2, 1, 1);         // B@2: 2, 1 (B@1 still retained: 2, 5)
        assertThat(usage.of(volume(A)).uniqueBytes()).as("PBN 1 is shared now").isZero();
    }

    @Test
    void of_shrunkVolume_blocksPastTheEndOfEverySnapshotNotCounted() {
        commit(A, "default", 0, 3, 0, 1, 1, 2, 2, 6);   // A@1: 1, 2, 6
        commit(A, "default", 1, 1, 0, 1);               // A@2: 1 (shrunk to one block)
        VolumeUsage usage = new VolumeUsage(catalog, locations);
        assertThat(usage.of(volume(A)).newestBytes()).isEqualTo(100L);
        assertThat(usage.of(volume(A)).retainedBytes()).isEqualTo(100L + 200 + 600);
        try (MetadataBatch b = new MetadataBatch()) {
            catalog.deleteSnapshot(b, volume(A), 1);
            catalog.write(b);
        }
        assertThat(usage.of(volume(A)).retainedBytes()).isEqualTo(100L);
    }

    @Test
    void of_emptyOrTooLargeVolume_zeroOrNotMeasured() {
        VolumeRecord empty = commit.createVolume(new VolumeId("empty"), BS, null, null);
        assertThat(new VolumeUsage(catalog, locations).of(empty)).isEqualTo(new VolumeUsage.Usage(0L, 0L, 0L));
        commit(A, "default", 0, 3, 0, 1, 1, 2, 2, 3);
        assertThat(new VolumeUsage(catalog, locations, 2).of(volume(A))).isEqualTo(new VolumeUsage.Usage(null, null, null));
    }
}
