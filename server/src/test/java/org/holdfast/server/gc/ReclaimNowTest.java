package org.holdfast.server.gc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.protocol.Commit;
import org.holdfast.common.protocol.Committed;
import org.holdfast.gc.check.FsckReport;
import org.holdfast.server.engine.ExactFingerprintIndex;
import org.holdfast.server.ingest.AgentDriver;
import org.holdfast.server.ingest.IngestServer;
import org.holdfast.server.ingest.IngestServices;
import org.holdfast.server.ingest.IngestSettings;
import org.holdfast.server.ingest.RecordingAuditLog;
import org.holdfast.server.ingest.TestTokens;
import org.holdfast.server.jobs.JobCancelledException;
import org.holdfast.server.jobs.JobContext;
import org.holdfast.server.store.StoredBlock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Reclaim-now over the real stack: RocksDB catalog, data logs, exact index, GC service, and the
 * real ingest on loopback (backups and restores over the wire protocol, with the GC's grace guard).
 * The checker (fsck) is the oracle: after reclaim-now the data store holds exactly the blocks its
 * mark references, plus those of backups still in progress.
 */
class ReclaimNowTest {
    private static final int BS = 4096;
    private static final int BLOCKS = 256;
    private static final long HOUR = 3_600_000L;

    @TempDir
    Path dir;

    private final GcServiceTest.SimClock clock = new GcServiceTest.SimClock(Instant.parse("2026-06-01T00:00:00Z").toEpochMilli());
    private GcStoreFixture fx;
    private IngestServer ingest;
    private RecordingReferenceGuard guard;

    @BeforeEach
    void open() {
        // data logs of 256 KiB: compaction after the free has sealed logs to rewrite
        fx = GcStoreFixture.open(dir, clock, 1L << 18, Duration.ofHours(2), 4, hook -> hook, CommitParts.DEFAULT_PART_ENTRIES, null,
                ExactFingerprintIndex::new, range());
        ingest = new IngestServer(IngestSettings.loopback(), new IngestServices(fx.store, fx.catalog, fx.commit, fx.index,
                guard = new RecordingReferenceGuard(new GcReferenceGuard(fx.gc)), clock, new TestTokens(), new RecordingAuditLog()));
        ingest.start();
    }

    /** The PBN range of the store under test (a subclass runs every test on a worker's range). */
    PbnRange range() {
        return PbnRange.STANDALONE;
    }

    @AfterEach
    void close() {
        ingest.close();
        fx.close();
    }

    @Test
    void reclaimNow_afterDeletingVolumeThatSharedBlocks_freesExactlyItsOwnBlocksAndTheOtherRestores() {
        Random r = new Random(11);
        byte[] a1 = random(r);
        byte[] a2 = a1.clone();
        fill(r, a2, 0, 64); // a's second snapshot replaces 64 blocks: its first snapshot alone needs the old ones
        byte[] b = random(r);
        System.arraycopy(a1, 64 * BS, b, 0, 96 * BS); // b shares 96 blocks of a's first snapshot (32 + 64 in both of a's)
        backup("a", a1);
        backup("a", a2);
        backup("b", b);
        Set<Long> aPbns = pbns("a");
        Set<Long> bPbns = pbns("b");
        Set<Long> onlyA = new HashSet<>(aPbns);
        onlyA.removeAll(bPbns);
        assertThat(bPbns).as("b deduplicated against a").containsAnyElementsOf(aPbns);
        assertThat(onlyA).hasSize(BLOCKS + 64 - 96);

        fx.gc.deleteVolume(new VolumeId("a"), VolumeGate.NONE);
        clock.millis += HOUR;
        GcService.CycleReport cycle = fx.gc.runCycle(clock.millis);
        assertThat(cycle.sweep().freed()).as("the expiry sweep waits for the backups' grace and a@1's 12h expiry").isZero();
        long storedBefore = storedBytes(onlyA);

        RecordingJob job = new RecordingJob();
        GcService.ReclaimReport rep = fx.gc.reclaimNow(job);

        assertThat(rep.blocksFreed()).isEqualTo(onlyA.size());
        assertThat(rep.bytesFreed()).isEqualTo(storedBefore);
        assertThat(rep.snapshotsMarked()).isEqualTo(1);
        assertThat(rep.blocksMarked()).isEqualTo(bPbns.size());
        assertThat(rep.blocksKeptForBackups()).isZero();
        assertThat(rep.compaction()).isNotNull();
        for (long p : onlyA) {
            assertThat(fx.store.fingerprint(p, new StoredBlock())).as("PBN %d only a held", p).isFalse();
        }
        for (long p : bPbns) {
            assertThat(fx.store.fingerprint(p, new StoredBlock())).as("PBN %d of b", p).isTrue();
        }
        FsckReport f = fx.gc.fsck(clock.millis);
        assertThat(f.clean()).as(f.toText()).isTrue();
        assertThat(storedBlocks()).as("the store holds exactly what the checker's mark references").isEqualTo(f.referencedPbns());
        assertThat(restore("b", 1)).as("b restores byte-identical").isEqualTo(b);
        assertThat(job.items).as("progress reached its total").isEqualTo(job.totalItems).isPositive();
        assertThat(job.bytes).isEqualTo(storedBefore);
        assertThat(String.join("\n", job.lines)).contains("freed " + onlyA.size() + " blocks");

        GcService.ReclaimReport again = fx.gc.reclaimNow(JobContext.NONE);
        assertThat(again.blocksFreed()).as("nothing is left to free").isZero();
    }

    @Test
    void reclaimNow_backupInProgressMatchingAndWritingBlocks_keepsThemAndTheBackupRestoresAfterCommit() throws Exception {
        Random r = new Random(12);
        byte[] old = random(r);
        backup("old", old);
        Set<Long> oldPbns = pbns("old");
        fx.gc.deleteVolume(new VolumeId("old"), VolumeGate.NONE); // its blocks: unreferenced, expiry hours away
        byte[] fresh = random(r);
        System.arraycopy(old, 0, fresh, 0, 128 * BS); // half matches old's (now unreferenced) blocks

        try (AgentDriver a = new AgentDriver(ingest.port())) {
            a.hello();
            a.begin("new", BS, fresh.length, 0);
            long before = fx.store.nextPbn();
            int asked = a.sendEntriesAndBlocks(fresh, BS, 0, BLOCKS, true, null);
            assertThat(asked).as("the matched half is not uploaded").isEqualTo(128);
            awaitStoredAndProtected(before, before + asked);

            GcService.ReclaimReport rep = fx.gc.reclaimNow(JobContext.NONE);
            assertThat(rep.blocksKeptForBackups()).as("matched and written blocks of the open backup").isEqualTo(256);
            assertThat(rep.blocksFreed()).as("old's blocks the backup does not match").isEqualTo(128);

            a.send(new Commit(fresh.length));
            assertThat(a.expect(Committed.class).sequence()).isEqualTo(1);
        }
        Set<Long> newPbns = pbns("new");
        assertThat(newPbns).as("the backup deduplicated against old's blocks").containsAnyElementsOf(oldPbns);
        assertThat(restore("new", 1)).isEqualTo(fresh);
        FsckReport f = fx.gc.fsck(clock.millis);
        assertThat(f.dataLoss()).as(f.toText()).isFalse();
        assertThat(f.bookkeepingErrors()).as(f.toText()).isFalse();
        assertThat(fx.gc.reclaimNow(JobContext.NONE).blocksFreed()).isZero();
        assertThat(storedBlocks()).isEqualTo(fx.gc.fsck(clock.millis).referencedPbns());
    }

    /**
     * The hardest interleaving: after the mark, a backup that was open commits, and a second backup of
     * the same volume replaces every block of it. The first snapshot is still retained but was not in
     * the mark, and its blocks now have RC 0: only the watch of in-flight sessions keeps them.
     */
    @Test
    void reclaimNow_snapshotCommittedAndDereferencedAfterTheMark_isNotFreed() {
        Random r = new Random(13);
        byte[] old = random(r);
        backup("old", old);
        fx.gc.deleteVolume(new VolumeId("old"), VolumeGate.NONE);
        byte[] first = random(r);
        System.arraycopy(old, 0, first, 0, 64 * BS);
        byte[] second = random(r);
        try (AgentDriver a = new AgentDriver(ingest.port())) {
            a.hello();
            a.begin("v", BS, first.length, 0);
            long before = fx.store.nextPbn();
            int asked = a.sendEntriesAndBlocks(first, BS, 0, BLOCKS, true, null);
            awaitStoredAndProtected(before, before + asked);
            JobContext racing = new RecordingJob() {
                @Override
                public void log(String line) {
                    super.log(line);
                    if (line.contains("blocks live")) { // between the mark and the free
                        a.send(new Commit(first.length));
                        assertThat(a.expect(Committed.class).sequence()).isEqualTo(1);
                        backup("v", second);
                    }
                }
            };
            GcService.ReclaimReport rep = fx.gc.reclaimNow(racing);
            assertThat(rep.blocksFreed()).as("only old's blocks that v@1 did not match").isEqualTo(BLOCKS - 64);
        }
        assertThat(fx.catalog.snapshots(new VolumeId("v"))).hasSize(2);
        assertThat(restore("v", 1)).as("the snapshot committed during reclaim-now").isEqualTo(first);
        assertThat(restore("v", 2)).isEqualTo(second);
        FsckReport f = fx.gc.fsck(clock.millis);
        assertThat(f.dataLoss()).as(f.toText()).isFalse();
        assertThat(f.bookkeepingErrors()).as(f.toText()).isFalse();
    }

    @Test
    void reclaimNow_cancelledAfterTheMark_freesNothingAndLaterRunFreesAll() {
        Random r = new Random(14);
        backup("gone", random(r));
        Set<Long> gone = pbns("gone");
        fx.gc.deleteVolume(new VolumeId("gone"), VolumeGate.NONE);
        RecordingJob cancel = new RecordingJob() {
            @Override
            public boolean cancelRequested() {
                return lines.stream().anyMatch(l -> l.contains("blocks live"));
            }
        };
        assertThatThrownBy(() -> fx.gc.reclaimNow(cancel)).isInstanceOf(JobCancelledException.class);
        for (long p : gone) {
            assertThat(fx.store.fingerprint(p, new StoredBlock())).isTrue();
        }
        assertThat(fx.gc.reclaimNow(JobContext.NONE).blocksFreed()).isEqualTo(gone.size());
        assertThat(fx.gc.fsck(clock.millis).clean()).isTrue();
    }

    // ------------------------------------------------------------------ helpers

    /** Records progress and log lines. */
    static class RecordingJob implements JobContext {
        long totalItems;
        long items;
        long bytes;
        final List<String> lines = new ArrayList<>();

        @Override
        public void total(long items, long bytes) {
            totalItems = items;
        }

        @Override
        public void advance(long items, long bytes) {
            this.items += items;
            this.bytes += bytes;
        }

        @Override
        public void log(String line) {
            lines.add(line);
        }

        @Override
        public boolean cancelRequested() {
            return false;
        }
    }

    static byte[] random(Random r) {
        byte[] b = new byte[BLOCKS * BS];
        r.nextBytes(b);
        return b;
    }

    static void fill(Random r, byte[] image, int fromBlock, int blocks) {
        byte[] part = new byte[blocks * BS];
        r.nextBytes(part);
        System.arraycopy(part, 0, image, fromBlock * BS, part.length);
    }

    void backup(String volume, byte[] image) {
        backup(ingest, volume, image);
    }

    /** Backs {@code image} up as volume {@code volume} over the wire, in 4 KiB blocks, compressed. */
    static void backup(IngestServer ingest, String volume, byte[] image) {
        try (AgentDriver a = new AgentDriver(ingest.port())) {
            a.hello();
            a.backup(volume, image, BS, true);
        }
    }

    byte[] restore(String volume, long seq) {
        return restore(ingest, volume, seq);
    }

    /** Restores snapshot {@code seq} of {@code volume} over the wire. */
    static byte[] restore(IngestServer ingest, String volume, long seq) {
        try (AgentDriver a = new AgentDriver(ingest.port())) {
            a.hello();
            return a.restore(volume, seq).image();
        }
    }

    /** The non-zero PBNs of every snapshot of {@code volume}. */
    Set<Long> pbns(String volume) {
        return fx.mappedPbns(fx.catalog.requireVolume(new VolumeId(volume)));
    }

    private long storedBytes(Set<Long> pbns) {
        long n = 0;
        StoredBlock b = new StoredBlock();
        for (long p : pbns) {
            assertThat(fx.store.fingerprint(p, b)).isTrue();
            n += b.storedLength();
        }
        return n;
    }

    private long storedBlocks() {
        long[] n = {0};
        fx.store.locations().forEach((pbn, logId, offset, storedLength, fps, fpOff) -> {
            n[0]++;
            return true;
        });
        return n[0];
    }

    /**
     * Waits until the ingest stored the uploaded blocks, PBNs [{@code from}, {@code to}) (BLOCKS frames get no
     * answer), and protected them: it protects a frame's blocks once all are stored, a moment a loaded machine can stretch.
     */
    private void awaitStoredAndProtected(long from, long to) {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (fx.store.nextPbn() < to || !guard.protectedAll(from, to)) {
            assertThat(System.nanoTime()).as("blocks stored and protected in 30 s").isLessThan(deadline);
            java.util.concurrent.locks.LockSupport.parkNanos(100_000); // not a spin: leaves the cores to the ingest
        }
    }
}
