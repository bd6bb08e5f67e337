package org.holdfast.server.gc;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.Random;
import org.holdfast.common.id.VolumeId;
import org.holdfast.gc.bosc.BoscSettings;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.SessionMap;
import org.holdfast.server.catalog.SnapshotCommit;
import org.holdfast.server.engine.ExactFingerprintIndex;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.FsyncPolicy;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.StoredBlock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A backup that runs longer than the grace period keeps the blocks it wrote or matched early,
 * through hourly GC cycles on a simulated clock, until it commits; an abandoned one loses them.
 */
class GcLongBackupTest {
    private static final VolumeId VOL = new VolumeId("long-vol");
    private static final int BS = 4096;
    private static final long HOUR = 3_600_000L;

    @TempDir
    Path dir;

    private final GcServiceTest.SimClock clock = new GcServiceTest.SimClock(Instant.parse("2026-06-01T00:00:00Z").toEpochMilli());

    private long write(DataStore store, long seed) throws Exception {
        byte[] payload = new byte[BS];
        new Random(seed).nextBytes(payload);
        byte[] fp = MessageDigest.getInstance("SHA-256").digest(payload);
        long pbn = store.append(fp, 0, payload, 0, BS, FormatVersions.CODEC_RAW, BS);
        store.sync();
        return pbn;
    }

    @Test
    void backupLongerThanGrace_earlyBlocksSurviveHourlyCycles_abandonedOnesGoAfterwards() throws Exception {
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"));
             DataStore store = DataStore.open(new DataStore.Settings(dir.resolve("data"), 1L << 20, FsyncPolicy.COMMIT, 64, 0), db);
             ExactFingerprintIndex index = new ExactFingerprintIndex(db)) {
            Catalog catalog = new Catalog(db);
            Object[] monitor = new Object[1];
            try (GcService gc = GcService.open(new GcService.Settings(dir.resolve("gc"),
                    BoscSettings.defaults().withCommitIdle(Duration.ofMillis(1)), Duration.ofHours(2), "12h", 8),
                    catalog, store, index, clock, () -> monitor[0])) {
                SnapshotCommit commit = new SnapshotCommit(catalog, new GcCommitHook(gc), clock);
                monitor[0] = commit;
                GcReferenceGuard guard = new GcReferenceGuard(gc);
                long kept = write(store, 1);   // written early by session 1, which runs for 30 hours
                long dropped = write(store, 2); // written early by session 2, abandoned after 30 hours
                guard.protect(1, new long[] {kept}, 0, 1);
                guard.protect(2, new long[] {dropped}, 0, 1);
                for (int h = 0; h < 30; h++) {
                    clock.millis += HOUR;
                    GcService.CycleReport r = gc.runCycle(clock.millis);
                    assertThat(r.sweep().freed()).as("hour " + h).isZero();
                }
                assertThat(store.fingerprint(kept, new StoredBlock())).isTrue();
                assertThat(store.fingerprint(dropped, new StoredBlock())).isTrue();

                SessionMap m = new SessionMap(4);
                m.add(0, kept);
                commit.commit(new SnapshotCommit.Request(VOL, BS, BS, 0, m, BS, 1, 1, 0));
                guard.release(1, true);
                guard.release(2, false);
                clock.millis += HOUR;
                GcService.CycleReport r = gc.runCycle(clock.millis);
                assertThat(r.sweep().freed()).isEqualTo(1);
                assertThat(store.fingerprint(kept, new StoredBlock())).as("committed block").isTrue();
                assertThat(store.fingerprint(dropped, new StoredBlock())).as("abandoned block").isFalse();
                assertThat(gc.fsck(clock.millis).dataLoss()).isFalse();
            }
        }
    }
}
