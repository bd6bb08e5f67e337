package org.holdfast.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.holdfast.common.protocol.Committed;
import org.holdfast.server.store.BlockBatch;
import org.holdfast.server.store.BlockHome;
import org.holdfast.server.store.LocalBlockHome;
import org.holdfast.server.store.ReadAhead;
import org.holdfast.server.store.StoredBlock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Idle means the agent sends nothing while the server waits for it, not the server being busy: a
 * restore whose server-side read takes several idle timeouts (as a read of a lost worker's block
 * waits for its log to be copied from the bucket) gets empty RESTORE_DATA keep-alives and completes
 * byte for byte; a commit whose sync takes as long (no keep-alive there) is not closed either.
 */
class ServerBusyNotIdleTest {
    private static final Duration IDLE = Duration.ofSeconds(1);
    private static final int BS = 4096;

    @TempDir
    Path dir;

    /** The harness's own store; the next read or sync is held for {@code hold} once {@code slow} is set. */
    private static final class SlowHome implements BlockHome {
        private final AtomicReference<IngestHarness> harness;
        private final AtomicBoolean slow;
        private final Duration hold;

        SlowHome(AtomicReference<IngestHarness> harness, AtomicBoolean slow, Duration hold) {
            this.harness = harness;
            this.slow = slow;
            this.hold = hold;
        }

        /** Holds this call if {@code slow} is set (once): the server is busy. */
        private void maybeHold() {
            if (slow.compareAndSet(true, false)) {
                try {
                    Thread.sleep(hold.toMillis());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        private BlockHome real() {
            return new LocalBlockHome(harness.get().store());
        }

        @Override
        public long append(long worker, byte[] fps, int fpOff, byte[] payload, int off, int storedLength, int codec, int rawLength) {
            return real().append(worker, fps, fpOff, payload, off, storedLength, codec, rawLength);
        }

        @Override
        public long appendFrame(long worker, byte[] fps, int fpOff, int members, byte[] frame, int off, int storedLength, int blockSize) {
            return real().appendFrame(worker, fps, fpOff, members, frame, off, storedLength, blockSize);
        }

        @Override
        public void sync() {
            maybeHold();
            real().sync();
        }

        // BlockHome.repair where main has it (no @Override: this branch's BlockHome predates it); as LocalBlockHome does
        public boolean repair(long pbn, byte[] fps, int fpOff, byte[] payload, int off, int storedLength, int codec, int rawLength) {
            return harness.get().store().repair(pbn, fps, fpOff, payload, off, storedLength, codec, rawLength);
        }

        @Override
        public void fingerprints(long[] pbns, int n, byte[] out, boolean[] found, boolean[] scratch) {
            real().fingerprints(pbns, n, out, found, scratch);
        }

        @Override
        public boolean fingerprint(long pbn, StoredBlock scratch) {
            return real().fingerprint(pbn, scratch);
        }

        @Override
        public int readBatch(long[] pbns, int from, int n, BlockBatch into) {
            maybeHold();
            return real().readBatch(pbns, from, n, into);
        }

        @Override
        public String where() {
            return "the harness's data store, slowed";
        }

        @Override
        public ReadAhead readAhead() {
            return null;
        }
    }

    private final AtomicReference<IngestHarness> ref = new AtomicReference<>();
    private final AtomicBoolean slow = new AtomicBoolean();

    private IngestHarness harness() {
        IngestSettings settings = new IngestSettings("127.0.0.1", 0, 2, 1024, 8, 64L << 20, IDLE, "test");
        IngestHarness h = IngestHarness.withBlocks(dir, settings, () -> new SlowHome(ref, slow, IDLE.multipliedBy(3)));
        ref.set(h);
        return h;
    }

    @Test
    void commit_syncHeldForThreeIdleTimeouts_notClosed_committed() {
        try (IngestHarness harness = harness(); AgentDriver agent = harness.agent()) {
            agent.hello();
            byte[] image = new byte[16 * BS];
            new Random(24).nextBytes(image);
            slow.set(true);
            Committed c = agent.backup("vol", image, BS, false);
            assertThat(slow).as("the sync was held").isFalse();
            assertThat(c.sequence()).isEqualTo(1);
            assertThat(agent.isOpen()).as("not closed as idle").isTrue();
            assertThat(agent.restore("vol", 1).image()).isEqualTo(image);
        }
    }

    @Test
    void restore_readHeldForThreeIdleTimeouts_notClosed_keepAlivesSent_completesByteForByte() {
        try (IngestHarness harness = harness()) {
            byte[] image = new byte[64 * BS];
            new Random(18).nextBytes(image);
            try (AgentDriver agent = harness.agent()) {
                agent.hello();
                Committed c = agent.backup("vol", image, BS, false);

                slow.set(true);
                AgentDriver.Restored r = agent.restore("vol", c.sequence());
                assertThat(slow).as("the read was held").isFalse();
                assertThat(r.image()).isEqualTo(image);
                assertThat(r.blocksSent()).isEqualTo(64);
                assertThat(r.frames()).as("the data frame and empty keep-alives while the read was held").isGreaterThanOrEqualTo(3);
                assertThat(agent.isOpen()).as("not closed as idle").isTrue();
                assertThat(agent.list("vol").snapshots()).as("the connection still serves requests").hasSize(1);
            }
        }
    }
}
