package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.holdfast.common.hash.BlockHasher;
import org.holdfast.common.protocol.DataRepair;
import org.holdfast.server.store.BadBlocks;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.common.id.PbnRange;
import org.holdfast.server.store.BlockBatch;
import org.holdfast.server.store.BlocksUnavailableException;
import org.holdfast.server.store.FormatVersions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link WorkerBlockHome} against a worker link that never answers (an embedded channel): the read
 * fails as unavailable with a message that says the worker did not answer in time, which the agent
 * prints, instead of "null". A repair is never sent to a worker older than cluster version 6, and one
 * the worker does not answer is no repair: the caller stores a new copy and the master's mark stays.
 */
class WorkerBlockHomeTest {
    private static final PbnRange RANGE = new PbnRange(1L << 40, (1L << 40) + (1L << 20));

    @Test
    void readBatch_workerSendsNoAnswer_unavailableSayingSo() {
        EmbeddedChannel silent = new EmbeddedChannel(); // takes the DATA_READ, answers nothing
        RemoteRangeStore s = new RemoteRangeStore("w-silent", RANGE, silent, Duration.ofMillis(50));
        RangeStores stores = new RangeStores();
        stores.add(3, s);
        BlockBatch batch = new BlockBatch(4, 1 << 16, FormatVersions.MAX_STORED_BYTES);

        assertThatThrownBy(() -> new WorkerBlockHome(stores).readBatch(new long[] {RANGE.first()}, 0, 1, batch))
                .isInstanceOf(BlocksUnavailableException.class)
                .satisfies(e -> assertThat(e.getMessage()).doesNotStartWith("null")
                        .startsWith("a worker sent no answer within holdfast.cluster.lost-after").contains("run it again"));
        silent.close();
    }

    @Test
    void repair_olderWorkerOrSilentWorker_falseAndTheMasterKeepsItsMark(@TempDir Path dir) {
        byte[] block = new byte[4096];
        new Random(3).nextBytes(block);
        byte[] fp = new byte[32];
        BlockHasher.forCurrentThread().sha256(block, 0, block.length, fp, 0);
        long pbn = RANGE.first() + 5;
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            BadBlocks marks = BadBlocks.of(db);
            marks.mark(pbn, fp, 0, "data worker w", "damaged on its worker (test)");
            EmbeddedChannel link = new EmbeddedChannel();
            RemoteRangeStore s = new RemoteRangeStore("w-old", RANGE, link, Duration.ofMillis(50));
            RangeStores stores = new RangeStores();
            stores.add(3, s);
            WorkerBlockHome home = new WorkerBlockHome(stores, null, marks);

            // a worker of cluster version 5 (takesRepairs unset) would close its link on DATA_REPAIR: it is sent none
            assertThat(home.repair(pbn, fp, 0, block, 0, block.length, FormatVersions.CODEC_RAW, block.length)).isFalse();
            assertThat((Object) link.readOutbound()).as("nothing sent to an older worker").isNull();

            // a version-6 worker that never answers: no repair (the backup stores a new copy), and the mark stays
            s.takesRepairs(true);
            assertThat(home.repair(pbn, fp, 0, block, 0, block.length, FormatVersions.CODEC_RAW, block.length)).isFalse();
            assertThat((Object) link.readOutbound()).as("the repair was sent").isInstanceOf(DataRepair.class);
            home.committed();
            assertThat(marks.isBad(pbn)).isTrue();
            link.close();

            // what a committed repair does: the mark goes in one synced write, counted once, and stays gone after a restart
            assertThat(marks.clearRepaired(List.of(pbn, pbn, pbn + 1))).isEqualTo(1);
            assertThat(marks.isBad(pbn)).isFalse();
            assertThat(marks.repairedOnWorkers()).isEqualTo(1);
        }
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            assertThat(BadBlocks.of(db).isBad(pbn)).isFalse();
        }
    }
}
