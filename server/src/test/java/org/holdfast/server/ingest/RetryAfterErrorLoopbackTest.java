package org.holdfast.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.holdfast.common.protocol.Abort;
import org.holdfast.common.protocol.BackupBegin;
import org.holdfast.common.protocol.BackupReady;
import org.holdfast.common.protocol.Entries;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.server.engine.DedupStream;
import org.holdfast.server.engine.ExactFingerprintIndex;
import org.holdfast.server.engine.FingerprintIndex;
import org.holdfast.server.engine.IndexStats;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An agent that retries at once after an ERROR that ended its backup (as the daemon's retry and an
 * operator's shell do) must find the volume free: the server releases the session's volume lock
 * before the ERROR can be read, not after.
 */
class RetryAfterErrorLoopbackTest {
    private static final int BS = 4096;
    private static final int ROUNDS = 3;

    @TempDir
    Path dir;

    private IngestHarness harness;
    /** While set, the index's flush takes this long: the abandon of a session with stored blocks flushes it. */
    private volatile long slowFlushMillis;

    /** The exact index with a flush made slow on demand, to widen the window between the ERROR and the lock's release. */
    private final class SlowFlushIndex implements FingerprintIndex {
        private final FingerprintIndex inner;

        SlowFlushIndex(FingerprintIndex inner) {
            this.inner = inner;
        }

        @Override
        public DedupStream openStream(String volumeName) {
            return inner.openStream(volumeName);
        }

        @Override
        public void forget(long pbn, byte[] fps, int off) {
            inner.forget(pbn, fps, off);
        }

        @Override
        public void flush() {
            long pause = slowFlushMillis;
            if (pause > 0) {
                try {
                    Thread.sleep(pause);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            inner.flush();
        }

        @Override
        public IndexStats stats() {
            return inner.stats();
        }

        @Override
        public void close() {
            inner.close();
        }
    }

    @BeforeEach
    void start() {
        harness = IngestHarness.withIndex(dir, (db, d) -> new SlowFlushIndex(new ExactFingerprintIndex(db)));
    }

    @AfterEach
    void stop() {
        harness.close();
    }

    @Test
    void backupBegin_rightAfterTheErrorThatEndedTheVolumesBackup_readyNotVolumeBusy() {
        // LBN 0 again: BAD_FRAME, refused on the lane
        retryRightAfterRefusal(a -> a.send(new Entries(0, 1, new byte[32], new long[] {0})));
    }

    @Test
    void backupBegin_rightAfterTheDecoderRefusedAFrame_readyNotVolumeBusy() {
        // a frame of an unknown type: refused by the decoder on the event loop, not on the lane
        retryRightAfterRefusal(a -> a.sendRaw(new byte[] {0, 0, 0, 2, (byte) ProtocolLimits.VERSION, 0x7F}));
    }

    private void retryRightAfterRefusal(java.util.function.Consumer<AgentDriver> refused) {
        byte[] img = BackupRestoreLoopbackTest.image(5, 256 * BS);
        long blocks = ProtocolLimits.blockCount(img.length, BS);
        for (int round = 0; round < ROUNDS; round++) {
            try (AgentDriver failing = harness.agent(); AgentDriver retry = harness.agent()) {
                failing.hello();
                retry.hello(); // connected and greeted already, so its BACKUP_BEGIN follows the ERROR at once
                failing.begin("vol", BS, img.length, 0);
                // stored blocks give the abandon work to do (sync, index), which is what kept the lock after the ERROR
                failing.sendEntriesAndBlocks(img, BS, 0, blocks, true, null);
                slowFlushMillis = 300;
                refused.accept(failing);
                ErrorMessage error = failing.expectErrorAndStop();
                assertThat(error.code()).isEqualTo(ErrorCode.BAD_FRAME);

                retry.send(new BackupBegin("vol", BS, img.length, 0));
                Object answer = retry.next();
                assertThat(answer).as("round %d: the retry right after the ERROR", round).isInstanceOf(BackupReady.class);
                slowFlushMillis = 0;
                retry.send(Abort.INSTANCE);
            }
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
                    .until(() -> !harness.server().volumeLocks().isLocked("vol"));
        }
    }
}
