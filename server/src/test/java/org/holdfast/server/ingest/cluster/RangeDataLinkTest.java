package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;
import static org.holdfast.server.ingest.cluster.OneRangeWorker.cause;
import static org.holdfast.server.ingest.cluster.RangeBlocks.BS;
import static org.holdfast.server.ingest.cluster.RangeBlocks.blocks;
import static org.holdfast.server.ingest.cluster.RangeBlocks.fps;

import com.github.luben.zstd.Zstd;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.holdfast.common.hash.BlockHasher;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.PayloadCodec;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.server.store.DataStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Data on workers over a real link (a master's cluster port and a worker's connector in one JVM,
 * real sockets, the worker's range store on disk): blocks and frames stored, synced and read back
 * byte for byte, kept across a worker restart; refusals (a forged fingerprint, PBNs outside the
 * range, a frame the data log cannot hold, a lost link) are clear and store nothing.
 */
class RangeDataLinkTest {
    private static final long FIRST = OneRangeWorker.FIRST;

    @TempDir
    Path dir;
    private OneRangeWorker link;
    private TestMaster master;

    @BeforeEach
    void start() throws Exception {
        link = new OneRangeWorker(dir, Duration.ofSeconds(10));
        master = link.master;
    }

    @AfterEach
    void stop() {
        link.close();
    }

    /** Starts the worker node "w1" over its range data in {@code <dir>/w1/range-data}; returns the master's end of its store once up. */
    private RemoteRangeStore startWorker() {
        return link.start(1L << 20, 0);
    }

    private void stopWorker() {
        link.stopWorker();
    }

    private static byte[] block(byte[] raw, int k) {
        return java.util.Arrays.copyOfRange(raw, k * BS, (k + 1) * BS);
    }

    @Test
    void storeSyncRead_blocksAndFrame_readBackByteIdenticalAndKeptAcrossAWorkerRestart() {
        RemoteRangeStore store = startWorker();
        PbnRange range = store.range();
        assertThat(range.first()).isEqualTo(FIRST);
        byte[] rawBlock = blocks(1, 1, false);
        byte[] zstdBlock = blocks(2, 1, true);
        byte[] frame = blocks(3, 8, true);
        long a = store.store(PayloadCodec.RAW, BS, 1, fps(rawBlock), rawBlock).join();
        long b = store.store(PayloadCodec.ZSTD, BS, 1, fps(zstdBlock), Zstd.compress(zstdBlock)).join();
        long c = store.store(PayloadCodec.ZSTD_FRAME, BS, 8, fps(frame), Zstd.compress(frame)).join();
        assertThat(new long[] {a, b, c}).as("PBNs from the range's first, a frame's members in order").containsExactly(FIRST, FIRST + 1,
                FIRST + 2);
        assertThat(store.sync().join()).as("durable below the next PBN").isEqualTo(FIRST + 10);

        long[] pbns = new long[10];
        for (int i = 0; i < 10; i++) {
            pbns[i] = FIRST + i;
        }
        List<byte[]> read = store.read(pbns).join();
        assertThat(read.get(0)).isEqualTo(rawBlock);
        assertThat(read.get(1)).isEqualTo(zstdBlock);
        for (int k = 0; k < 8; k++) {
            assertThat(read.get(2 + k)).as("frame member " + k).isEqualTo(block(frame, k));
        }

        stopWorker();
        RemoteRangeStore again = startWorker();
        assertThat(again).isNotSameAs(store);
        assertThat(again.range()).as("the same node gets its range back").isEqualTo(range);
        List<byte[]> after = again.read(pbns).join();
        for (int i = 0; i < 10; i++) {
            assertThat(after.get(i)).as("PBN " + pbns[i] + " after the worker restarted").isEqualTo(read.get(i));
        }
        assertThat(again.store(PayloadCodec.RAW, BS, 1, fps(rawBlock), rawBlock).join()).as("the next PBN follows the kept ones")
                .isEqualTo(FIRST + 10);
    }

    @Test
    void read_manyLargeBlocks_answeredInSeveralFramesEachFittingTheLimit() {
        RemoteRangeStore store = startWorker();
        int bs = ProtocolLimits.MAX_BLOCK_SIZE;
        byte[][] raw = new byte[20][];
        long[] pbns = new long[20];
        for (int i = 0; i < 20; i++) {
            raw[i] = new byte[bs];
            new Random(100 + i).nextBytes(raw[i]);
            byte[] fp = new byte[32];
            BlockHasher.forCurrentThread().sha256(raw[i], 0, bs, fp, 0);
            pbns[i] = store.store(PayloadCodec.RAW, bs, 1, fp, raw[i]).join();
        }
        store.sync().join();
        assertThat(store.readSome(pbns, 0, 20).join().count()).as("one answer holds what fits 16 MiB, not all 20 MiB").isBetween(1, 16);
        List<byte[]> read = store.read(pbns).join();
        for (int i = 0; i < 20; i++) {
            assertThat(read.get(i)).isEqualTo(raw[i]);
        }
    }

    @Test
    void store_forgedFingerprint_refusedNothingStoredAndTheLinkStays() {
        RemoteRangeStore store = startWorker();
        byte[] frame = blocks(4, 4, true);
        byte[] forged = fps(frame);
        forged[3 * 32] ^= 1;
        Throwable e = cause(() -> store.store(PayloadCodec.ZSTD_FRAME, BS, 4, forged, Zstd.compress(frame)).join());
        assertThat(e).isInstanceOf(RangeWorkerFailedException.class).hasMessageContaining("block 3 of 4 does not hash to its fingerprint")
                .hasMessageContaining("nothing of it was stored");
        byte[] one = blocks(5, 1, false);
        byte[] wrong = fps(blocks(6, 1, false));
        assertThat(cause(() -> store.store(PayloadCodec.RAW, BS, 1, wrong, one).join()))
                .hasMessageContaining("block 0 of 1 does not hash to its fingerprint");
        DataStore.Stats stats = link.data().store().stats();
        assertThat(stats.appendedBlocks()).as("nothing appended").isZero();
        assertThat(stats.nextPbn()).isEqualTo(FIRST);
        assertThat(store.store(PayloadCodec.ZSTD_FRAME, BS, 4, fps(frame), Zstd.compress(frame)).join())
                .as("the link stays; the good frame takes the first PBN").isEqualTo(FIRST);
    }

    @Test
    void read_pbnOutsideTheRangeOrNeverStored_refusedClearly() {
        RemoteRangeStore store = startWorker();
        byte[] one = blocks(7, 1, false);
        long pbn = store.store(PayloadCodec.RAW, BS, 1, fps(one), one).join();
        store.sync().join();
        assertThat(cause(() -> store.read(new long[] {pbn, 5}).join())).isInstanceOf(RangeWorkerFailedException.class)
                .hasMessageContaining("PBN 5 is outside this worker's range " + store.range()).hasMessageContaining("nothing was read");
        long past = store.range().limit();
        assertThat(cause(() -> store.read(new long[] {past}).join())).hasMessageContaining("PBN " + past + " is outside");
        assertThat(cause(() -> store.read(new long[] {pbn + 1}).join())).hasMessageContaining("no location for this PBN");
        assertThat(store.read(new long[] {pbn}).join().get(0)).as("the stored block still reads").isEqualTo(one);
    }

    @Test
    void store_frameOverTheDataLogsLimit_refusedNothingStored() {
        RemoteRangeStore store = startWorker();
        byte[] frame = blocks(8, 256, false); // 1 MiB of random bytes: zstd makes a frame over the log's 1 MiB - 1
        byte[] z = Zstd.compress(frame);
        assertThat(z.length).isGreaterThan((1 << 20) - 1).isLessThanOrEqualTo(ProtocolLimits.maxFramePayload(256, BS));
        assertThat(cause(() -> store.store(PayloadCodec.ZSTD_FRAME, BS, 256, fps(frame), z).join()))
                .isInstanceOf(RangeWorkerFailedException.class).hasMessageContaining("frame stored length");
        assertThatThrownBy(() -> store.store(PayloadCodec.ZSTD_FRAME, BS, 257, new byte[257 * 32], z))
                .as("a master cannot even send more than 1 MiB of blocks in one frame").isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("do not make a frame");
        assertThat(link.data().store().stats().appendedBlocks()).isZero();
        assertThat(link.data().store().stats().nextPbn()).isEqualTo(FIRST);
    }

    @Test
    void store_workerGone_callsFailAsLost() {
        RemoteRangeStore store = startWorker();
        stopWorker();
        await().atMost(Duration.ofSeconds(10)).until(() -> !store.isUp());
        byte[] one = blocks(9, 1, false);
        assertThat(cause(() -> store.store(PayloadCodec.RAW, BS, 1, fps(one), one).join())).isInstanceOf(RangeWorkerLostException.class)
                .hasMessageContaining("data worker w1").hasMessageContaining("is lost");
        assertThat(master.server.rangeStores().up(1)).isNull();
    }
}
