package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.embedded.EmbeddedChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.holdfast.common.protocol.DedupControl;
import org.holdfast.common.protocol.DedupDone;
import org.holdfast.common.protocol.DedupFrames;
import org.holdfast.common.protocol.Message;
import org.holdfast.common.protocol.StartOverReason;
import org.holdfast.server.cluster.StartOverMark;
import org.junit.jupiter.api.Test;

/**
 * What the master makes of a worker's start-over reports that a hostile or buggy worker sends: on
 * every answer (heard once per link, so the audit log cannot be flooded), with a time in the future
 * (taken as now, so a rebuild still answers it).
 */
class IndexStartOverReportTest {
    private static final long[] LOAD = new long[DedupFrames.LOAD_FIELDS];

    /** Answers {@code n} calls on {@code link}, each DEDUP_DONE carrying a start-over at {@code at}. */
    private static void answerEachWithAStartOver(EmbeddedChannel ch, DedupLink link, int n, long at) {
        for (int i = 0; i < n; i++) {
            long id = link.nextId();
            CompletableFuture<Message> call = link.call(id, new DedupControl(id, i == 0 ? DedupControl.LOAD : DedupControl.FLUSH, 0));
            ch.writeInbound(DedupFramesBadInputTest.encoded(new DedupDone(id, LOAD, at, DedupDone.STARTED_OVER_OTHER_ID)));
            assertThat(call).isCompleted();
        }
    }

    @Test
    void startOver_onEveryAnswer_heardOncePerLink() {
        EmbeddedChannel ch = new EmbeddedChannel();
        DedupLink link = DedupFramesBadInputTest.masterLink(ch);
        List<StartOverMark> heard = new ArrayList<>();
        link.onStartOver(heard::add);
        answerEachWithAStartOver(ch, link, 50, System.currentTimeMillis() - 1000);
        assertThat(heard).as("one registration, one start-over: the rest would only flood the log and audit").hasSize(1);
        assertThat(heard.get(0).reason()).isEqualTo(StartOverReason.OTHER_ID);
        ch.finishAndReleaseAll(); // the calls' frames, never read here
    }

    @Test
    void startOver_atATimeInTheFuture_takenAsReceived_andARebuildStartedAfterItAnswersIt() {
        EmbeddedChannel ch = new EmbeddedChannel();
        DedupLink link = DedupFramesBadInputTest.masterLink(ch);
        List<StartOverMark> heard = new ArrayList<>();
        link.onStartOver(heard::add);
        long before = System.currentTimeMillis();
        answerEachWithAStartOver(ch, link, 1, Long.MAX_VALUE / 2);
        assertThat(heard.get(0).atMillis()).as("no later than the master heard it").isBetween(before, System.currentTimeMillis());
        ch.finishAndReleaseAll();

        DedupLinks links = new DedupLinks();
        links.startedOver(4, heard.get(0));
        links.rebuilt(4, System.currentTimeMillis());
        assertThat(links.startedOver(4)).as("a rebuild started after the report answers it, whatever the worker's clock").isNull();

        // a worker clock ahead of the master's: the report is still answered by a rebuild the master started after hearing it
        StartOverMark ahead = new StartOverMark(before + 3_600_000, StartOverReason.EPOCH_GAP, before);
        links.startedOver(4, ahead);
        links.rebuilt(4, before + 1);
        assertThat(links.startedOver(4)).isNull();
        StartOverMark during = new StartOverMark(before - 3_600_000, StartOverReason.EPOCH_GAP, before + 2);
        links.startedOver(4, during);
        links.rebuilt(4, before + 1);
        assertThat(links.startedOver(4)).as("heard during the rebuild (a worker clock behind): stays").isEqualTo(during);
    }
}
