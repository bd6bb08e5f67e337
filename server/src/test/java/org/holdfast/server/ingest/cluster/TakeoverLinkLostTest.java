package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import org.holdfast.common.id.PbnRange;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.SealedLogs;
import org.holdfast.server.store.WorkerKeys;
import org.holdfast.server.store.object.ObjectStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The race a takeover's read opens (S3Proxy, a real archiving range store of two sealed logs): the old
 * node let back while the heir reads, serving on its open store, loses what it commits after the
 * heir's claim (deleted as late uploads), which is why the master holds it off
 * ({@code cluster.TakeoverInProgress}); and the heir's half: when its link to the master drops or
 * registers again during the read, it claims nothing (the master may have let the old node back),
 * and that refusal is not kept, so its next registration takes the range over, the old node's commit with it.
 */
class TakeoverLinkLostTest {
    private static final PbnRange RANGE = new PbnRange(5_000_000, 6_000_000);
    private static final long WORKER = 9;

    @TempDir
    Path tmp;
    private RangeBucket fixture;
    private ObjectStore look;
    private TwoSealedLogs logs;
    private SealedLogs records;
    private String logs1;
    private WorkerRangeData old;

    @BeforeEach
    void archiveTwoLogs() throws Exception {
        fixture = RangeBucket.start(tmp);
        look = fixture.look;
        logs = TwoSealedLogs.archive(fixture, WORKER, RANGE, 31);
        records = fixture.recordsOf(logs.keys());
        logs1 = WorkerKeys.space(WORKER, 1) + "/logs/";
    }

    @AfterEach
    void stop() throws Exception {
        fixture.close();
    }

    /** The heir on an empty directory, which runs {@code duringRead} once, at its first read of a log of epoch 1. */
    private WorkerRangeData heir(Runnable duringRead) {
        boolean[] due = {true};
        WorkerRangeData heir = fixture.node(tmp.resolve("heir").resolve(WorkerRangeData.DIRECTORY),
                () -> new ForwardingObjectStore(fixture.client()) {
                    @Override
                    public byte[] getRange(String key, long offset, int length) {
                        if (due[0] && key.startsWith(logs1)) {
                            due[0] = false;
                            duringRead.run();
                        }
                        return real.getRange(key, offset, length);
                    }
                }, Duration.ofSeconds(10));
        heir.identify(WORKER);
        heir.checkTakeoversAgainst(id -> records);
        return heir;
    }

    /** The old node back at epoch 1 (its disk survived), serving on its open store. */
    private DataStore oldNodeServing() {
        old = fixture.node("worker", Duration.ofSeconds(10));
        old.identify(WORKER);
        DataStore s = old.claim(RANGE);
        assertThat(old.epoch()).isEqualTo(1);
        return s;
    }

    @Test
    void withoutTheHold_anOldNodeLetInDuringTheRead_losesWhatItCommitsAfterTheClaim() {
        DataStore s = oldNodeServing(); // registered while the heir read: nothing in the bucket changes before the claim
        WorkerRangeData heir = heir(() -> { });
        heir.claim(RANGE);
        assertThat(heir.epoch()).isEqualTo(2);

        byte[] more = RangeBlocks.blocks(79, 2, false);
        RangeBlocks.appendRaw(s, more);
        old.sync(s); // committed on the old node, which has not registered again, so it has not listed the bucket since
        assertThat(look.list(logs1)).as("its commit reached the bucket").hasSize(3);

        heir.identify(WORKER); // the heir's next registration lists the bucket: the old node's upload is a late upload
        heir.claim(RANGE);
        assertThat(look.list(logs1)).as("the committed blocks are deleted: the loss the master's hold prevents").hasSize(2);
    }

    @Test
    void heirsLinkDropsDuringTheRead_claimsNothing_notKept_itsNextRegistrationTakesOverWithTheOldNodesCommit() {
        DataStore s = oldNodeServing(); // the master let it back once the heir had been silent for lost-after
        boolean[] linked = {true};
        WorkerRangeData heir = heir(() -> linked[0] = false);
        heir.leaseDeletes(() -> linked[0] ? Long.MAX_VALUE : 0); // the master no longer hears the heir

        assertThatThrownBy(() -> heir.claim(RANGE)).isInstanceOf(TakeoverLinkLostException.class)
                .hasMessageContaining("the takeover of worker " + WORKER + "'s range at epoch 2 claims nothing: this node's link to"
                        + " the master dropped, or it registered again, while it read the range's logs")
                .hasMessageContaining("nothing was claimed or written in the bucket");
        assertThat(look.size(WorkerKeys.marker(WORKER, 2))).as("epoch 2 not claimed: the old node is not fenced").isEmpty();
        assertThat(tmp.resolve("heir").resolve(WorkerRangeData.DIRECTORY).resolve("catalog")).doesNotExist();

        byte[] more = RangeBlocks.blocks(80, 2, false);
        long[] pbns = RangeBlocks.appendRaw(s, more);
        old.sync(s);
        assertThat(look.list(logs1)).as("the old node's commit is in the bucket").hasSize(3);

        linked[0] = true;
        heir.identify(WORKER); // registered again: not refused as before, it takes the range over now
        DataStore t = heir.claim(RANGE);
        assertThat(heir.epoch()).isEqualTo(2);
        RangeBlocks.assertStoreReads(t, pbns, more);
        RangeBlocks.assertStoreReads(t, logs.firstPbns(), logs.first());
    }

    @Test
    void heirsLinkEndsAndRegistersAgainDuringTheRead_claimsNothing() {
        WorkerRangeData[] heir = new WorkerRangeData[1];
        heir[0] = heir(() -> { // its link ended (WorkerConnector) and registered again while it read; its lease held throughout
            heir[0].unlinked();
            heir[0].identify(WORKER);
        });
        assertThatThrownBy(() -> heir[0].claim(RANGE)).isInstanceOf(TakeoverLinkLostException.class);
        assertThat(look.size(WorkerKeys.marker(WORKER, 2))).isEmpty();
    }
}
