package org.holdfast.server.gc;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.protocol.Committed;
import org.holdfast.server.catalog.MapCursor;
import org.holdfast.server.catalog.ReferenceGuard;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.ingest.AgentDriver;
import org.holdfast.server.ingest.IngestHarness;
import org.holdfast.server.store.MetadataBatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The race between a backup matching a stored block and a sweep that has just chosen that block:
 * the ingest must store the block anew instead of failing or, worse, committing a reference to it.
 */
class ReclaimRaceTest {
    private static final int BS = 4096;

    @TempDir
    Path dir;

    /** Refuses (as a tombstoned PBN does) every PBN of {@link #doomed} the ingest tries to reference. */
    private static final class SweepingGuard implements ReferenceGuard {
        final Set<Long> doomed = ConcurrentHashMap.newKeySet();
        final Set<Long> refused = ConcurrentHashMap.newKeySet();

        @Override
        public void protect(long sessionId, long[] pbns, int off, int count) {
            for (int i = off; i < off + count; i++) {
                if (doomed.contains(pbns[i])) {
                    throw new ReclaimedBlockException(pbns[i]);
                }
            }
        }

        @Override
        public int protectOrRefuse(long sessionId, long[] pbns, int off, int count) {
            int n = 0;
            for (int i = off; i < off + count; i++) {
                if (doomed.contains(pbns[i])) {
                    refused.add(pbns[i]);
                    pbns[i] = 0;
                    n++;
                }
            }
            return n;
        }

        @Override
        public void release(long sessionId, boolean committed) {
        }
    }

    @Test
    void duplicateOfBlockBeingReclaimed_isStoredAnewAndRestoresBitForBitAfterTheReclaim() {
        byte[] image = new byte[256 * BS];
        new Random(7).nextBytes(image);
        System.arraycopy(image, 10 * BS, image, 11 * BS, BS); // a duplicate inside the image too
        SweepingGuard guard = new SweepingGuard();
        try (IngestHarness h = new IngestHarness(dir, 0, guard)) {
            try (AgentDriver a = h.agent()) {
                a.hello();
                a.backup("old", image, BS, true);
            }
            // the sweep has chosen every block of "old" (think: the volume was deleted) and is freeing them
            VolumeRecord old = h.catalog().requireVolume(new VolumeId("old"));
            guard.doomed.addAll(pbnsOf(h, old, 1, 256));
            assertThat(guard.doomed).hasSize(255);

            Committed c;
            try (AgentDriver a = h.agent()) {
                a.hello();
                c = a.backup("new", image, BS, true);
            }
            assertThat(guard.refused).as("the race was forced").isNotEmpty();
            assertThat(c.newBlocks()).as("every refused block was stored again, once").isEqualTo(255);

            VolumeRecord fresh = h.catalog().requireVolume(new VolumeId("new"));
            Set<Long> mapped = pbnsOf(h, fresh, 1, 256);
            assertThat(mapped).as("the new snapshot references no block being reclaimed").doesNotContainAnyElementsOf(guard.doomed);

            // the sweep completes: the doomed blocks' locations go
            try (MetadataBatch batch = new MetadataBatch()) {
                for (long pbn : guard.doomed) {
                    h.store().locations().delete(batch, pbn);
                }
                h.catalog().db().write(batch, true);
            }
            try (AgentDriver a = h.agent()) {
                a.hello();
                assertThat(a.restore("new", 1).image()).as("restores bit for bit").isEqualTo(image);
            }
        }
    }

    private static Set<Long> pbnsOf(IngestHarness h, VolumeRecord v, long seq, long blocks) {
        Set<Long> out = new java.util.HashSet<>();
        try (MapCursor c = h.catalog().mapCursor(v.internalId())) {
            c.startScan(seq, 0, blocks);
            while (c.nextMapped()) {
                if (c.pbn() != 0) {
                    out.add(c.pbn());
                }
            }
        }
        return out;
    }
}
