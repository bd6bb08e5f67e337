package org.holdfast.server.gc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Random;
import java.util.Set;
import org.holdfast.common.id.VolumeId;
import org.holdfast.gc.check.FsckReport;
import org.holdfast.server.engine.DedupStream;
import org.holdfast.server.engine.ExactFingerprintIndex;
import org.holdfast.server.engine.FingerprintIndex;
import org.holdfast.server.engine.IndexStats;
import org.holdfast.server.ingest.AgentDriver;
import org.holdfast.server.ingest.IngestServer;
import org.holdfast.server.ingest.IngestServices;
import org.holdfast.server.ingest.IngestSettings;
import org.holdfast.server.ingest.RecordingAuditLog;
import org.holdfast.server.ingest.TestTokens;
import org.holdfast.server.store.StoredBlock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A GC cycle whose forget is refused, as a master's is while a dedup worker is away (or fails when
 * a worker's link ends between two DEDUP_FORGET frames), frees nothing; the next cycle, with the
 * worker back, must free those blocks (operations.md: "bring the worker back and run GC again"),
 * also when their chunk was already known to the sweep from an earlier cycle. Real stack: RocksDB
 * catalog, data logs, exact index behind a wrapper that refuses forgets while "away", GC service,
 * ingest on loopback.
 */
class RefusedForgetCycleTest {
    private static final int BS = 4096;
    private static final int BLOCKS = 64;
    private static final long HOUR = 3_600_000L;

    @TempDir
    Path dir;

    private final GcServiceTest.SimClock clock = new GcServiceTest.SimClock(Instant.parse("2026-06-01T00:00:00Z").toEpochMilli());
    private AwayIndex index;
    private GcStoreFixture fx;
    private IngestServer ingest;

    /** The exact index, refusing forgets while {@link #away} as RemoteFingerprintIndex does while a worker is not connected. */
    private static final class AwayIndex implements FingerprintIndex {
        private final ExactFingerprintIndex delegate;
        volatile boolean away;

        AwayIndex(ExactFingerprintIndex delegate) {
            this.delegate = delegate;
        }

        private void refuseIfAway() {
            if (away) {
                throw new IllegalStateException("cannot free blocks while dedup worker w1 (id 2) is not connected");
            }
        }

        @Override
        public DedupStream openStream(String volumeName) {
            return delegate.openStream(volumeName);
        }

        @Override
        public void forget(long pbn, byte[] fps, int off) {
            refuseIfAway();
            delegate.forget(pbn, fps, off);
        }

        @Override
        public void forgetAll(long[] pbns, byte[] fps, int count) {
            refuseIfAway();
            delegate.forgetAll(pbns, fps, count);
        }

        @Override
        public void flush() {
            delegate.flush();
        }

        @Override
        public IndexStats stats() {
            return delegate.stats();
        }

        @Override
        public void close() {
            delegate.close();
        }
    }

    @BeforeEach
    void open() {
        fx = GcStoreFixture.open(dir, clock, 1L << 20, Duration.ofHours(2), 4, hook -> hook, CommitParts.DEFAULT_PART_ENTRIES, null,
                db -> index = new AwayIndex(new ExactFingerprintIndex(db)));
        ingest = new IngestServer(IngestSettings.loopback(), new IngestServices(fx.store, fx.catalog, fx.commit, fx.index,
                new GcReferenceGuard(fx.gc), clock, new TestTokens(), new RecordingAuditLog()));
        ingest.start();
    }

    @AfterEach
    void close() {
        ingest.close();
        fx.close();
    }

    @Test
    void cycleRefusedWhileAWorkerIsAway_nextCycleWithItBack_freesTheBlocksOfAChunkAnEarlierCycleKnew() {
        Random r = new Random(7);
        backup("keep", random(r));
        backup("old", random(r));
        Set<Long> old = fx.mappedPbns(fx.catalog.requireVolume(new VolumeId("old")));
        assertThat(old).hasSize(BLOCKS);
        clock.millis += 13 * HOUR;
        assertThat(fx.gc.runCycle(clock.millis).sweep().freed()).as("every block referenced: the sweep knows their chunk").isZero();
        fx.gc.deleteVolume(new VolumeId("old"), VolumeGate.NONE);
        clock.millis += 13 * HOUR; // past the default policy's 12 h and the 2 h grace
        index.away = true;
        assertThatThrownBy(() -> fx.gc.runCycle(clock.millis)).hasMessageContaining("is not connected");
        index.away = false;

        GcService.CycleReport back = fx.gc.runCycle(clock.millis);

        assertThat(back.sweep().freed()).as("the next cycle frees what the refused one could not: %s", back.sweep()).isEqualTo(BLOCKS);
        for (long p : old) {
            assertThat(fx.store.fingerprint(p, new StoredBlock())).as("PBN %d freed", p).isFalse();
        }
        FsckReport f = fx.gc.fsck(clock.millis);
        assertThat(f.clean()).as(f.toText()).isTrue();
    }

    private static byte[] random(Random r) {
        byte[] b = new byte[BLOCKS * BS];
        r.nextBytes(b);
        return b;
    }

    private void backup(String volume, byte[] image) {
        try (AgentDriver a = new AgentDriver(ingest.port())) {
            a.hello();
            a.backup(volume, image, BS, true);
        }
    }
}
