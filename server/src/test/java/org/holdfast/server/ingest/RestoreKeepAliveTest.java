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
 * A restore whose server-side read takes several idle timeouts (as a read of a lost worker's block
 * waits for its log to be copied from the bucket) is not closed as idle: the server keeps the
 * connection while it works and sends empty RESTORE_DATA keep-alives, and the restore completes
 * byte for byte.
 */
class RestoreKeepAliveTest {
    private static final Duration IDLE = Duration.ofSeconds(1);
    private static final int BS = 4096;

    @TempDir
    Path dir;

    /** The harness's own store, with the first read of a restore held for {@code hold} when {@link #slow} is set. */
    private static final class SlowReads implements BlockHome {
        private final AtomicReference<IngestHarness> harness;
        private final AtomicBoolean slow;
        private final Duration hold;

        SlowReads(AtomicReference<IngestHarness> harness, AtomicBoolean slow, Duration hold) {
            this.harness = harness;
            this.slow = slow;
            this.hold = hold;
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
            real().sync();
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
            if (slow.compareAndSet(true, false)) {
                try {
                    Thread.sleep(hold.toMillis()); // the server is busy: a read waiting on a bucket copy
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
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

    @Test
    void restore_readHeldForThreeIdleTimeouts_notClosed_keepAlivesSent_completesByteForByte() {
        AtomicReference<IngestHarness> ref = new AtomicReference<>();
        AtomicBoolean slow = new AtomicBoolean();
        IngestSettings settings = new IngestSettings("127.0.0.1", 0, 2, 1024, 8, 64L << 20, IDLE, "test");
        try (IngestHarness harness = IngestHarness.withBlocks(dir, settings, () -> new SlowReads(ref, slow, IDLE.multipliedBy(3)))) {
            ref.set(harness);
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
