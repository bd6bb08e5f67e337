package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import org.holdfast.common.hash.BlockHasher;
import org.holdfast.common.protocol.PayloadCodec;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.store.BadBlocks;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The check of freed bad marks ({@link FreedBadMarks#clear}) against a worker that cannot answer (a
 * master's cluster port, its catalog and bad-block registry on disk, and one worker node in this
 * JVM, real sockets and range store): with the worker's range data closed under a live link, with
 * the worker stopped, and with it stopped while the check runs, no mark goes, not even those of the
 * blocks it did free; once it answers again, exactly the marks of the blocks it freed go.
 */
class FreedBadMarksWorkerDownTest {
    private static final int BS = 4096;
    private static final int HELD = 10;
    private static final int FREED = 20;

    @TempDir
    Path dir;
    private OneRangeWorker link;

    @AfterEach
    void stop() {
        if (link != null) {
            link.close();
        }
    }

    @Test
    void workerFailingOrDown_keepsEveryMark_backUp_clearsExactlyTheFreedOnes() throws Exception {
        link = new OneRangeWorker(dir, Duration.ofSeconds(10));
        RemoteRangeStore store = link.start(1L << 20, 0);
        long[] pbns = new long[HELD + FREED];
        Random random = new Random(7);
        for (int i = 0; i < pbns.length; i++) {
            byte[] raw = new byte[BS];
            random.nextBytes(raw);
            byte[] fp = new byte[32];
            BlockHasher.forCurrentThread().sha256(raw, 0, BS, fp, 0);
            pbns[i] = store.store(PayloadCodec.RAW, BS, 1, fp, raw).join();
        }
        store.sync().join();
        long[] freed = Arrays.copyOfRange(pbns, HELD, pbns.length);
        new RangeBlockReclaimer(link.data().store(), null, null, () -> false).reclaim(freed, FREED); // as the worker's sweep frees them
        BadBlocks marks = BadBlocks.of(link.master.db);
        List<BadBlocks.Mark> all = new ArrayList<>();
        for (long p : pbns) {
            all.add(new BadBlocks.Mark(p, fp(p), "test", "marked by the test"));
        }
        all.add(new BadBlocks.Mark(store.range().limit() - 1, fp(0), "test", "never handed out"));
        marks.markAll(all);
        // clear() alone: the sweeps before it are not this test's
        FreedBadMarks check = new FreedBadMarks(null, link.master.server.rangeStores(), marks, new Catalog(link.master.db));

        link.data().close(); // the link stays up, every read fails on the worker ("the worker is stopping")
        assertThat(check.clear(List.of(1L))).as("every read failed").contains(": " + all.size() + " in the swept workers' ranges, 0 no longer held")
                .endsWith("cleared 0");
        assertThat(marks.count()).isEqualTo(all.size());

        link.stopWorker();
        await().atMost(Duration.ofSeconds(10)).until(() -> !store.isUp());
        assertThat(check.clear(List.of(1L))).as("down: not asked").contains("none in the swept workers' ranges");
        assertThat(marks.count()).isEqualTo(all.size());

        // stopped while the check runs: what it asked before the stop may be answered, nothing after; never a held block's mark
        RemoteRangeStore again = link.start(1L << 20, 0);
        long[] many = new long[20_000];
        for (int i = 0; i < many.length; i++) {
            many[i] = pbns[i % pbns.length];
        }
        CompletableFuture<boolean[]> asked = CompletableFuture.supplyAsync(() -> NotHeldProbe.ask(again, many));
        Thread.sleep(20);
        link.stopWorker();
        boolean[] answers = asked.get(30, java.util.concurrent.TimeUnit.SECONDS);
        for (int i = 0; i < many.length; i++) {
            if (answers[i]) {
                assertThat(many[i]).as("only a freed PBN is ever answered not held").isIn(Arrays.stream(freed).boxed().toList());
            }
        }
        assertThat(answers[many.length - 1]).as("asked after the stop: held").isFalse();
        await().atMost(Duration.ofSeconds(10)).until(() -> !again.isUp());

        link.start(1L << 20, 0);
        String line = check.clear(List.of(1L));
        assertThat(line).contains(": " + all.size() + " in the swept workers' ranges, " + FREED + " no longer held there, 0 of those");
        for (long p : pbns) {
            assertThat(marks.isBad(p)).as("PBN %d", p).isEqualTo(Arrays.stream(freed).noneMatch(f -> f == p));
        }
        assertThat(marks.isBad(store.range().limit() - 1)).as("never handed out: the worker fails the read").isTrue();
    }

    private static byte[] fp(long pbn) {
        return java.nio.ByteBuffer.allocate(32).putLong(0x646f776eL).putLong(pbn).array();
    }
}
