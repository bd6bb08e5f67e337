package org.holdfast.server.gc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.Random;
import org.holdfast.common.id.VolumeId;
import org.holdfast.gc.GcStoreException;
import org.holdfast.gc.check.FsckReport;
import org.holdfast.server.catalog.SessionMap;
import org.holdfast.server.catalog.SnapshotCommit;
import org.holdfast.server.e2e.SmallDisk;
import org.holdfast.server.store.FormatVersions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The GC directory on a small tmpfs that fills up: the GC log writer does not die, GC requests
 * fail fast instead of hanging, commits still succeed, and once space is back the same service
 * runs its cycle, frees what expired and checks clean, without a restart.
 */
class GcDiskFullTest {
    private static final VolumeId VOL = new VolumeId("full-vol");
    private static final int BS = 4096;
    private static final long HOUR = 3_600_000L;

    @TempDir
    Path dir;

    private final GcServiceTest.SimClock clock = new GcServiceTest.SimClock(Instant.parse("2026-06-01T00:00:00Z").toEpochMilli());
    private SmallDisk disk;
    private GcStoreFixture fixture;

    @AfterEach
    void close() {
        try {
            if (fixture != null) {
                fixture.close();
            }
        } finally {
            disk.close();
        }
    }

    @Test
    void gcLogOnFullDisk_requestsFailFastCommitsGoOn_thenGcResumesWithoutRestart() throws Exception {
        disk = SmallDisk.mount(dir.resolve("gc"), 2L << 20);
        Assumptions.assumeTrue(disk.real(), "needs a real small file system for a real ENOSPC in the GC log; ran on: " + disk.kind());
        fixture = GcStoreFixture.open(dir, clock, 1L << 20, Duration.ofHours(2), 8, hook -> hook);
        GcService gc = fixture.gc;
        long p1 = block(fixture, 1);
        commit(fixture, 0, 0, p1);
        clock.millis += HOUR;
        Path filler = disk.fillLeaving(0);
        // the commit itself lives in the catalog: it succeeds; its GC record waits for the log
        long p2 = block(fixture, 2);
        commit(fixture, 1, 0, p2);
        long t0 = System.nanoTime();
        assertThatThrownBy(() -> gc.runCycle(clock.millis)).isInstanceOf(GcStoreException.class)
                .hasMessageContaining("No space left");
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).as("fails fast, does not hang").isLessThan(Duration.ofSeconds(10));
        assertThat(gc.pipelineProblem()).as("the gc health component's reason").isNotNull();
        assertThat(gc.pipelineProblem().getMessage()).contains("No space left");

        Files.delete(filler);
        clock.millis += 13 * HOUR; // snapshot 1 expires
        GcService.CycleReport r = runCycleWhenLogWrites(gc);
        assertThat(gc.pipelineProblem()).as("GC writes again: the gc health component is UP").isNull();
        assertThat(r.snapshotsDeleted()).isEqualTo(1);
        assertThat(fixture.store.fingerprint(p1, new org.holdfast.server.store.StoredBlock())).as("expired block freed").isFalse();
        assertThat(fixture.store.fingerprint(p2, new org.holdfast.server.store.StoredBlock())).as("retained block kept").isTrue();
        FsckReport f = gc.fsck(clock.millis);
        assertThat(f.dataLoss()).as(f.toText()).isFalse();
        assertThat(f.bookkeepingErrors()).as(f.toText()).isFalse();
    }

    /** The flusher retries with up to 1 s back-off: the first cycle after freeing space may still see the stall. */
    private GcService.CycleReport runCycleWhenLogWrites(GcService gc) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (true) {
            try {
                return gc.runCycle(clock.millis);
            } catch (GcStoreException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(200);
            }
        }
    }

    private static long block(GcStoreFixture fx, long seed) throws Exception {
        byte[] payload = new byte[BS];
        new Random(seed).nextBytes(payload);
        byte[] fp = MessageDigest.getInstance("SHA-256").digest(payload);
        long pbn = fx.store.append(fp, 0, payload, 0, BS, FormatVersions.CODEC_RAW, BS);
        fx.store.sync();
        return pbn;
    }

    private static void commit(GcStoreFixture fx, long parent, long lbn, long pbn) {
        SessionMap m = new SessionMap(4);
        m.add(lbn, pbn);
        fx.commit.commit(new SnapshotCommit.Request(VOL, BS, BS, parent, m, BS, 1, 1, 0));
    }
}
