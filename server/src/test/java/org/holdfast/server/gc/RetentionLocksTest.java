package org.holdfast.server.gc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.holdfast.common.id.VolumeId;
import org.holdfast.gc.check.FsckReport;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.MapCursor;
import org.holdfast.server.catalog.SessionMap;
import org.holdfast.server.catalog.SnapshotCommit;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.security.AuditEvent;
import org.holdfast.server.store.DataDirectory;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.StoredBlock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Retention locks on the real store stack: a compliance lock withstands every way to remove or
 * shorten its snapshot (deletion, volume deletion, policy, release, shortening, GC and compaction
 * past its expiry, restart, gc-rebuild) and lapses at its date; governance locks release.
 */
class RetentionLocksTest {
    private static final VolumeId VOL = new VolumeId("locked-vol");
    private static final int BS = 4096;
    private static final long HOUR = 3_600_000L;
    private static final long DAY = 24 * HOUR;
    private static final long T0 = Instant.parse("2026-06-01T00:00:00Z").toEpochMilli();

    @TempDir
    Path dir;

    private final GcServiceTest.SimClock clock = new GcServiceTest.SimClock(T0);
    private final List<AuditEvent> audited = new ArrayList<>();
    private GcStoreFixture fixture;
    private GcService gc;
    private Catalog catalog;

    @BeforeEach
    void open() {
        // small data logs, so that compaction has sealed logs to work on
        fixture = GcStoreFixture.open(dir, clock, 64 * 1024, Duration.ofHours(2), 8, hook -> hook);
        gc = fixture.gc;
        catalog = fixture.catalog;
        gc.locks().auditTo(audited::add);
    }

    @AfterEach
    void close() {
        if (fixture != null) {
            fixture.close();
        }
    }

    private void reopen() {
        fixture.close();
        open();
    }

    private static byte[] payload(long seed) {
        byte[] p = new byte[BS];
        new Random(seed).nextBytes(p);
        return p;
    }

    private long block(long seed) throws Exception {
        byte[] p = payload(seed);
        long pbn = fixture.store.append(MessageDigest.getInstance("SHA-256").digest(p), 0, p, 0, BS, FormatVersions.CODEC_RAW, BS);
        fixture.store.sync();
        assertThat(gc.guard().protect(pbn)).isTrue();
        return pbn;
    }

    private void commit(VolumeId v, long parent, long blocks, long... lbnPbn) {
        SessionMap m = new SessionMap(4);
        for (int i = 0; i < lbnPbn.length; i += 2) {
            m.add(lbnPbn[i], lbnPbn[i + 1]);
        }
        fixture.commit.commit(new SnapshotCommit.Request(v, BS, blocks * BS, parent, m, m.size() * (long) BS, m.size(), m.size(), 0));
    }

    /** Restores {@code seq} block by block through the map and the data store and compares with the seeds. */
    private void assertRestores(long seq, long... seeds) {
        VolumeRecord v = catalog.requireVolume(VOL);
        StoredBlock b = new StoredBlock();
        long[] got = new long[seeds.length];
        try (MapCursor c = catalog.mapCursor(v.internalId())) {
            c.startScan(seq, 0, seeds.length);
            while (c.nextMapped()) {
                got[(int) c.lbn()] = c.pbn();
            }
        }
        for (int lbn = 0; lbn < seeds.length; lbn++) {
            assertThat(got[lbn]).as("lbn %d of @%d", lbn, seq).isPositive();
            fixture.store.read(got[lbn], b);
            byte[] data = Arrays.copyOfRange(b.data(), b.dataOffset(), b.dataOffset() + b.storedLength());
            assertThat(data).as("lbn %d of @%d", lbn, seq).isEqualTo(payload(seeds[lbn]));
        }
    }

    private void assertFsckClean(long now) {
        FsckReport f = gc.fsck(now);
        assertThat(f.clean()).as(f.toText()).isTrue();
    }

    private void assertRefused(Runnable r, String contains) {
        assertThatThrownBy(r::run).isInstanceOf(SnapshotLockedException.class).hasMessageContaining(contains);
    }

    /** Snapshot 1 maps seeds 1, 2; snapshot 2 replaces lbn 0 with seed 3 and later ones churn the store. */
    private void history() throws Exception {
        commit(VOL, 0, 2, 0, block(1), 1, block(2));
        clock.millis += HOUR;
        commit(VOL, 1, 2, 0, block(3));
        // churn: short-lived blocks that fill and seal data logs, so compaction finds dead space
        for (int i = 0; i < 20; i++) {
            clock.millis += HOUR;
            commit(VOL, 2 + i, 2, 1, block(100 + i));
        }
    }

    @Test
    void complianceLock_everyWayToRemoveOrShortenIt_isRefused_andItLapsesAtItsDate() throws Exception {
        history();
        long until = T0 + 30 * DAY;
        RetentionLocks.Lock lock = gc.locks().place(VOL, 1, RetentionLocks.Mode.COMPLIANCE, until, "user:admin");
        assertThat(lock.mode()).isEqualTo(RetentionLocks.Mode.COMPLIANCE);
        assertThat(gc.held(VOL, 1)).isTrue();
        String date = Instant.ofEpochMilli(until).toString();

        assertRefused(() -> gc.deleteSnapshot(VOL, 1), date);
        assertRefused(() -> gc.deleteVolume(VOL, alwaysFree()), date);
        assertRefused(() -> gc.setPolicy(VOL, "1h"), date);
        assertRefused(() -> gc.setPolicy(VOL, "keep-last=1"), date);
        assertThat(gc.policy(VOL)).isEqualTo("12h");
        assertRefused(() -> gc.releaseHold(VOL, 1), date);
        assertRefused(() -> gc.locks().release(VOL, 1), date);
        assertRefused(() -> gc.locks().place(VOL, 1, RetentionLocks.Mode.COMPLIANCE, until - DAY, "user:admin"), "extended");
        assertRefused(() -> gc.locks().place(VOL, 1, RetentionLocks.Mode.GOVERNANCE, null, "user:admin"), "governance");
        assertRefused(() -> gc.placeHold(VOL, 1), "governance");
        assertThat(gc.locks().lock(VOL, 1).orElseThrow().untilMillis()).isEqualTo(until);

        // a longer policy is fine; extending the lock is fine
        gc.setPolicy(VOL, "24h");
        gc.locks().place(VOL, 1, RetentionLocks.Mode.COMPLIANCE, until + DAY, "user:admin");
        assertThatThrownBy(() -> gc.locks().place(VOL, 1, RetentionLocks.Mode.COMPLIANCE, until, "user:admin"))
                .isInstanceOf(SnapshotLockedException.class);
        long lockDate = until + DAY;

        // the clock well past the snapshot's expiry (24h), before the lock date: GC and compaction
        clock.millis = T0 + 10 * DAY;
        GcService.CycleReport r = gc.runCycle(clock.millis);
        assertThat(r.snapshotsDeleted()).as("every unlocked old snapshot expired").isPositive();
        assertThat(r.sweep().freed()).isPositive();
        assertThat(catalog.snapshot(catalog.requireVolume(VOL), 1)).isPresent();
        GcService.CompactionReport c = r.compaction(); // a cycle ends with compaction (reclaim)
        assertThat(c.logsRewritten() + c.logsDeleted()).as("compaction had work to do").isPositive();
        assertThat(c.bytesReclaimed()).isPositive();
        gc.compact(); // and a reclaim run on its own
        assertRestores(1, 1, 2);
        assertFsckClean(clock.millis);

        // durable: a restart, then a rebuild of the GC metadata from the catalog
        reopen();
        assertThat(gc.locks().lock(VOL, 1).orElseThrow().untilMillis()).isEqualTo(lockDate);
        assertRefused(() -> gc.deleteVolume(VOL, alwaysFree()), "compliance");
        fixture.close();
        new GcDirectorySwap(dir.resolve("gc").getParent(), "test").deleteTree(dir.resolve("gc"));
        try (DataDirectory dd = DataDirectory.open(dir); MetadataDb rdb = MetadataDb.open(dd.catalogDir())) {
            new GcMetadataRebuild(dd.root(), new Catalog(rdb), new GcMetadataRebuild.Settings(Duration.ofHours(2), 4), clock,
                    line -> { }).run();
        }
        open();
        clock.millis += 5 * DAY; // past the rebuild's grace
        gc.runCycle(clock.millis);
        gc.compact();
        assertThat(gc.locks().lock(VOL, 1).orElseThrow().mode()).isEqualTo(RetentionLocks.Mode.COMPLIANCE);
        assertRestores(1, 1, 2);
        assertFsckClean(clock.millis);

        // at the lock date it lapses by itself and the snapshot expires under its policy in the same cycle
        clock.millis = lockDate;
        r = gc.runCycle(clock.millis);
        assertThat(gc.locks().lock(VOL, 1)).isEmpty();
        assertThat(catalog.snapshot(catalog.requireVolume(VOL), 1)).isEmpty();
        assertThat(r.snapshotsDeleted()).isEqualTo(1);
        assertFsckClean(clock.millis);
        assertThat(audited).extracting(AuditEvent::action, AuditEvent::target, AuditEvent::principal)
                .contains(org.assertj.core.groups.Tuple.tuple("lock.lapse", "volume:locked-vol@1", "system"),
                        org.assertj.core.groups.Tuple.tuple("snapshot.expire", "volume:locked-vol@1", "system"));
    }

    @Test
    void governanceLock_releasable_andDatedOneLapses() throws Exception {
        history();
        gc.locks().place(VOL, 1, RetentionLocks.Mode.GOVERNANCE, null, "user:op");
        assertRefused(() -> gc.deleteSnapshot(VOL, 1), "an admin must release");
        // governance can be upgraded to compliance, and a dated governance lock cannot be shortened
        gc.locks().place(VOL, 2, RetentionLocks.Mode.GOVERNANCE, T0 + 5 * DAY, "user:op");
        assertRefused(() -> gc.locks().place(VOL, 2, RetentionLocks.Mode.GOVERNANCE, T0 + 4 * DAY, "user:op"), "admin may release");
        gc.locks().release(VOL, 1);
        assertThat(gc.held(VOL, 1)).isFalse();
        clock.millis = T0 + 2 * DAY;
        gc.runCycle(clock.millis);
        assertThat(catalog.snapshot(catalog.requireVolume(VOL), 1)).as("released: expired").isEmpty();
        assertThat(catalog.snapshot(catalog.requireVolume(VOL), 2)).as("still locked").isPresent();
        clock.millis = T0 + 5 * DAY;
        gc.runCycle(clock.millis);
        assertThat(catalog.snapshot(catalog.requireVolume(VOL), 2)).as("lapsed, then expired").isEmpty();
        assertFsckClean(clock.millis);
    }

    @Test
    void placeLock_badInput_isRefusedAndChangesNothing() throws Exception {
        history();
        assertThatThrownBy(() -> gc.locks().place(VOL, 1, RetentionLocks.Mode.COMPLIANCE, null, "x"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("needs a date");
        assertThatThrownBy(() -> gc.locks().place(VOL, 1, RetentionLocks.Mode.COMPLIANCE, T0, "x"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not in the future");
        assertThatThrownBy(() -> RetentionLocks.Mode.parse("forever")).isInstanceOf(IllegalArgumentException.class);
        assertThat(gc.held(VOL, 1)).isFalse();
        assertFsckClean(clock.millis);
    }

    @Test
    void lockRecord_encoding_matchesGoldenFixture() {
        GcRecords.LockRecord r = new GcRecords.LockRecord(7, 3, 2, 1_800_000_000_000L, 1_780_000_000_000L, "user:admin");
        byte[] v = GcRecords.encodeLock(r);
        // version 1, mode 2 (compliance), until, placed-at, u16 length 10, "user:admin"
        assertThat(HexFormat.of().formatHex(v))
                .isEqualTo("0102" + "000001a3185c5000" + "0000019e70448800" + "000a" + "757365723a61646d696e");
        assertThat(GcRecords.decodeLock(7, 3, v, "test")).isEqualTo(r);
        v[0] = 2;
        assertThatThrownBy(() -> GcRecords.decodeLock(7, 3, v, "test")).hasMessageContaining("version 2");
    }

    private static VolumeGate alwaysFree() {
        return new VolumeGate() {
            @Override
            public boolean tryExclude(String volume) {
                return true;
            }

            @Override
            public void release(String volume) {
            }
        };
    }
}
