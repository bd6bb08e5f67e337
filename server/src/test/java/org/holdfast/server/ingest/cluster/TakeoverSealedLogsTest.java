package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.holdfast.common.id.PbnRange;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.SealedLogs;
import org.holdfast.server.store.StoreException;
import org.holdfast.server.store.WorkerKeys;
import org.holdfast.server.store.object.ObjectStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node taking a dead worker's range over checks each log it adopts against the master's records of
 * the worker's sealed logs ({@link org.holdfast.server.store.TakeoverCheck}), on S3Proxy with a real
 * archiving range store of two sealed logs: a log cut at a record boundary refuses the takeover with
 * nothing claimed or written in the bucket, and a takeover after the log is put back reads every block
 * bit for bit; a log altered at the same size is refused the same way, before the claim (its SHA-256 is
 * read first), and the old worker can still write; with {@code takeover-check=size} it is found only
 * after the claim.
 */
class TakeoverSealedLogsTest {
    private static final PbnRange RANGE = new PbnRange(5_000_000, 6_000_000);
    private static final long WORKER = 9;

    @TempDir
    Path tmp;
    private RangeBucket fixture;
    private ObjectStore look;
    private TwoSealedLogs logs;
    private SealedLogs records;

    @BeforeEach
    void archiveTwoLogs() throws Exception {
        fixture = RangeBucket.start(tmp);
        look = fixture.look;
        logs = TwoSealedLogs.archive(fixture, WORKER, RANGE, 21);
        records = fixture.recordsOf(logs.keys());
    }

    @AfterEach
    void stop() throws Exception {
        fixture.close();
    }

    private WorkerRangeData heir(String name, SealedLogs sealed) {
        WorkerRangeData n = fixture.node(name, Duration.ofSeconds(10));
        n.identify(WORKER);
        n.checkTakeoversAgainst(id -> {
            assertThat(id).isEqualTo(WORKER);
            return sealed;
        });
        return n;
    }

    @Test
    void logCutAtARecordBoundary_takeoverRefusedNamingIt_bucketUnchanged_thenTheRestoredLogIsTakenOverBitForBit() throws Exception {
        TwoSealedLogs.Cut c2 = logs.cutSecond(fixture, tmp);
        String cut = c2.key();
        int at = c2.at();
        byte[] log = c2.sealed();
        List<String> before = look.list(WorkerKeys.prefix(WORKER));

        WorkerRangeData refused = heir("heir", records);
        assertThatThrownBy(() -> refused.claim(RANGE)).isInstanceOf(CorruptDataException.class)
                .hasMessageContaining("the takeover of worker " + WORKER + "'s range is refused: log " + cut + " is " + at
                        + " bytes in the bucket, but the worker sealed it at " + log.length + " bytes, SHA-256 ")
                .hasMessageContaining("nothing was claimed or written in the bucket");
        assertThat(look.list(WorkerKeys.prefix(WORKER))).as("no marker of epoch 2, nothing else").isEqualTo(before);
        assertThat(refused.epoch()).isZero();
        assertThat(tmp.resolve("heir").resolve(WorkerRangeData.DIRECTORY).resolve("catalog")).doesNotExist();

        Path good = Files.write(tmp.resolve("good.hfl"), log);
        fixture.replace(cut, good); // the operator puts the log the worker sealed back
        WorkerRangeData taken = heir("heir2", records);
        DataStore s = taken.claim(RANGE);
        assertThat(taken.epoch()).isEqualTo(2);
        RangeBlocks.assertStoreReads(s, logs.firstPbns(), logs.first());
        RangeBlocks.assertStoreReads(s, logs.secondPbns(), logs.second());
    }

    @Test
    void logAlteredAtTheSameSize_refusedBeforeTheClaim_bucketUnchanged_oldWorkerStillWrites() throws Exception {
        String altered = logs.keys().get(0);
        byte[] log = flipLastByte(altered);
        List<String> before = look.list(WorkerKeys.prefix(WORKER));

        WorkerRangeData refused = heir("heir", records);
        assertThatThrownBy(() -> refused.claim(RANGE)).isInstanceOf(CorruptDataException.class)
                .hasMessageContaining("the takeover of worker " + WORKER + "'s range is refused: log " + altered + " in the bucket has SHA-256 ")
                .hasMessageContaining(", but the worker sealed it at " + log.length + " bytes, SHA-256 ")
                .hasMessageContaining("nothing was claimed or written in the bucket")
                .hasMessageContaining("from the bucket's versioning or a replica, or from the old worker's range-data/data/");
        assertThat(look.list(WorkerKeys.prefix(WORKER))).as("no marker of epoch 2, nothing else").isEqualTo(before);
        assertThat(refused.epoch()).isZero();
        assertThat(tmp.resolve("heir").resolve(WorkerRangeData.DIRECTORY).resolve("catalog")).doesNotExist();
        assertThatThrownBy(() -> refused.claim(RANGE)).as("and every later call").hasMessageContaining(altered);

        // the old worker (its disk survived) is not fenced: it opens at epoch 1 and uploads a new sealed log
        WorkerRangeData old = fixture.node("worker", Duration.ofSeconds(10));
        old.identify(WORKER);
        DataStore s = old.claim(RANGE);
        assertThat(old.epoch()).isEqualTo(1);
        byte[] more = RangeBlocks.blocks(77, 2, false);
        long[] pbns = RangeBlocks.appendRaw(s, more);
        old.sync(s);
        assertThat(look.list(WorkerKeys.space(WORKER, 1) + "/logs/")).hasSize(3);
        RangeBlocks.assertStoreReads(s, pbns, more);
    }

    @Test
    void sizeOnlyBeforeTheClaim_theAlteredLogIsFoundAfterIt_asTheOptOutSays() throws Exception {
        String altered = logs.keys().get(0);
        flipLastByte(altered);

        WorkerRangeData refused = heir("heir", records);
        refused.checkTakeoverContent(false); // holdfast.cluster.takeover-check=size
        assertThatThrownBy(() -> refused.claim(RANGE)).isInstanceOf(CorruptDataException.class)
                .hasMessageContaining("log " + altered + " in the bucket has SHA-256 ")
                .hasMessageContaining("the store was not made");
        assertThat(look.size(WorkerKeys.marker(WORKER, 2))).as("epoch 2 claimed: the old worker is fenced").isPresent();
        assertThat(look.list(WorkerKeys.space(WORKER, 2) + "/logs/")).as("nothing written under the new epoch").isEmpty();
    }

    @Test
    void oldNodeUploadsDuringTheSha256Check_takeoverRefusedNothingClaimed_itsCommittedLogKept() throws Exception {
        // the old node back (it registered again while the heir's link was down), serving at epoch 1
        WorkerRangeData old = fixture.node("worker", Duration.ofSeconds(10));
        old.identify(WORKER);
        DataStore s = old.claim(RANGE);
        byte[] more = RangeBlocks.blocks(78, 2, false);
        long[][] pbns = new long[1][];
        String logs1 = WorkerKeys.space(WORKER, 1) + "/logs/";
        WorkerRangeData heir = fixture.node(tmp.resolve("heir").resolve(WorkerRangeData.DIRECTORY),
                () -> new ForwardingObjectStore(fixture.client()) {
                    @Override
                    public byte[] getRange(String key, long offset, int length) {
                        if (pbns[0] == null && key.startsWith(logs1)) {
                            // while the heir reads the range through SHA-256 the old node commits: its log goes to e1
                            pbns[0] = RangeBlocks.appendRaw(s, more);
                            old.sync(s);
                        }
                        return real.getRange(key, offset, length);
                    }
                }, Duration.ofSeconds(10));
        heir.identify(WORKER);
        heir.checkTakeoversAgainst(id -> records);

        assertThatThrownBy(() -> heir.claim(RANGE)).isInstanceOf(StoreException.class)
                .hasMessageContaining("the takeover of worker " + WORKER + "'s range is refused: the bucket's keys of the worker changed")
                .hasMessageContaining("nothing was claimed or written in the bucket");
        assertThat(pbns[0]).as("the old node wrote during the check").isNotNull();
        assertThat(look.size(WorkerKeys.marker(WORKER, 2))).as("epoch 2 not claimed: the old node is not fenced").isEmpty();
        assertThat(look.list(logs1)).as("its committed log not deleted as a late upload").hasSize(3);
        RangeBlocks.assertStoreReads(s, pbns[0], more);
    }

    /** Flips a bit of the last block's stored bytes of log {@code key} in the bucket (same size); the bytes as altered. */
    private byte[] flipLastByte(String key) throws Exception {
        Path f = tmp.resolve("altered.hfl");
        look.download(key, f);
        byte[] log = Files.readAllBytes(f);
        log[log.length - 1] ^= 1;
        Files.write(f, log);
        fixture.replace(key, f);
        return log;
    }
}
