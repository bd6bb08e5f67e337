package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.channel.embedded.EmbeddedChannel;
import java.time.Duration;
import org.holdfast.common.id.PbnRange;
import org.holdfast.server.store.BlockBatch;
import org.holdfast.server.store.BlocksUnavailableException;
import org.holdfast.server.store.FormatVersions;
import org.junit.jupiter.api.Test;

/**
 * {@link WorkerBlockHome} against a worker link that never answers (an embedded channel): the read
 * fails as unavailable with a message that says the worker did not answer in time, which the agent
 * prints, instead of "null".
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
}
