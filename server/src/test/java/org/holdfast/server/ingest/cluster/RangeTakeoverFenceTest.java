package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.holdfast.server.ingest.cluster.RangeBlocks.BS;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.holdfast.common.id.PbnRange;
import org.holdfast.server.store.Compactor;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.LocationTestAccess;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.StoreException;
import org.holdfast.server.store.RangeTakeover;
import org.holdfast.server.store.RangeTakenOverException;
import org.holdfast.server.store.StoredBlock;
import org.holdfast.server.store.WorkerKeys;
import org.holdfast.server.store.object.ObjectStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The worker's side of the takeover fence (S3Proxy): a node that takes a range over skips past every
 * PBN its master heard an earlier node hand out (blocks that never reached the bucket among them), so
 * no PBN names two blocks, also after it restarts; two fresh nodes of one worker on an empty bucket
 * meet at epoch 1's create-only marker and never both archive there; the epoch a node's range data
 * archives at is known before its store opens, for REGISTER; a takeover a crash interrupted resumes
 * at its own epoch; and an old node's uploads after the takeover are deleted, never an adopted log.
 */
class RangeTakeoverFenceTest {
    private static final PbnRange RANGE = new PbnRange(1_000_000, 2_000_000);
    private static final long WORKER = 3;

    @TempDir
    Path tmp;
    private RangeBucket bucket;
    private ObjectStore look;

    @BeforeEach
    void start() throws Exception {
        bucket = RangeBucket.start(tmp);
        look = bucket.look;
    }

    @AfterEach
    void stop() throws Exception {
        bucket.close();
    }

    /** Node {@code name}'s range data (its own directory), registered as {@link #WORKER} with PBN floor {@code floor} (0: none). */
    private WorkerRangeData node(String name, long floor) {
        return node(name, floor, bucket::client);
    }

    /** As {@link #node(String, long)}, its bucket opened by {@code opener}. */
    private WorkerRangeData node(String name, long floor, java.util.function.Supplier<ObjectStore> opener) {
        WorkerRangeData d = bucket.node(tmp.resolve(name).resolve(WorkerRangeData.DIRECTORY), opener, Duration.ofSeconds(10));
        d.identify(WORKER, floor);
        return d;
    }

    private static long[] append(DataStore s, byte[] raw) {
        byte[] fps = RangeBlocks.fps(raw);
        long[] pbns = new long[raw.length / BS];
        for (int k = 0; k < pbns.length; k++) {
            pbns[k] = s.append(fps, k * 32, raw, k * BS, BS, FormatVersions.CODEC_RAW, BS);
        }
        return pbns;
    }

    @Test
    void claim_takeoverAfterStoresThatNeverReachedTheBucket_startsPastEveryPbnTheMasterHeard_noPbnNamesTwoBlocks() throws Exception {
        WorkerRangeData a = node("a", 0);
        DataStore sa = a.claim(RANGE);
        long[] synced = append(sa, RangeBlocks.blocks(1, 4, false));
        a.sync(sa);
        // handed out to a session that never committed: the master's session (and any mark keyed by PBN) names them
        long[] unsynced = append(sa, RangeBlocks.blocks(2, 4, false));
        long heard = sa.nextPbn(); // what the master heard (DATA_STORED answers, heartbeats)
        a.close();
        WorkerRangeTakeoverTest.delete(tmp.resolve("a"));
        assertThat(synced[synced.length - 1] + 1).as("the adopted logs alone would restart here, below the old node's PBNs")
                .isLessThan(heard);

        WorkerRangeData b = node("b", heard);
        DataStore sb = b.claim(RANGE);
        byte[] fresh = RangeBlocks.blocks(3, 4, false);
        long[] mine = append(sb, fresh);
        b.sync(sb);

        assertThat(b.epoch()).isEqualTo(2);
        assertThat(mine[0]).as("past every PBN the master heard handed out").isGreaterThanOrEqualTo(heard);
        Set<Long> old = new HashSet<>();
        for (long p : synced) {
            old.add(p);
        }
        for (long p : unsynced) {
            old.add(p);
        }
        for (long p : mine) {
            assertThat(old).as("PBN " + p + " names one block").doesNotContain(p);
        }
        assertReads(sb, mine, fresh);
        // the skip is durable: the node restarted (its next REGISTERED may carry no floor, from an older master) stays above it
        b.close();
        WorkerRangeData again = node("b", 0);
        DataStore s2 = again.claim(RANGE);
        assertThat(s2.nextPbn()).isGreaterThan(mine[mine.length - 1]);
        assertReads(s2, mine, fresh);
    }

    @Test
    void claim_twoFreshNodesListingTheEmptyBucketAtOnce_meetAtEpochOnesMarker_theSecondWritesNothing() throws Exception {
        RangeTakeover.Plan late = RangeTakeover.plan(WORKER, look); // b listed the empty bucket before a claimed
        assertThat(late.epoch()).isEqualTo(1);
        WorkerRangeData a = node("a", 0);
        DataStore sa = a.claim(RANGE);
        append(sa, RangeBlocks.blocks(4, 2, false));
        a.sync(sa);

        assertThatThrownBy(() -> RangeTakeover.claim(late, look, tmp.resolve("b-scratch"))).isInstanceOf(RangeTakenOverException.class)
                .hasMessageContaining("another node started archiving worker 3's range at epoch 1");
        assertThat(look.list(WorkerKeys.prefix(WORKER))).as("a's marker and log only").hasSize(2);
    }

    /**
     * Tagged slow: three rounds of two stores each, timing-dependent (which node lists first), while the deterministic
     * test above shows the mechanism. It took 15 s run first in its JVM, most of that the S3 warm-up every first
     * S3Proxy test pays; not measured warm.
     */
    @Test
    @Tag("slow")
    void claim_twoFreshNodesRacing_neverBothArchiveAtOneEpoch() throws Exception {
        for (int round = 0; round < 3; round++) {
            long worker = 10 + round;
            List<WorkerRangeData> nodes = new ArrayList<>();
            for (String n : List.of("x" + round, "y" + round)) {
                WorkerRangeData d = bucket.node(n, Duration.ofSeconds(10));
                d.identify(worker);
                nodes.add(d);
            }
            CyclicBarrier together = new CyclicBarrier(2);
            ExecutorService pool = Executors.newFixedThreadPool(2);
            try {
                List<Future<Long>> epochs = new ArrayList<>();
                for (WorkerRangeData d : nodes) {
                    epochs.add(pool.submit(() -> {
                        together.await();
                        try {
                            d.claim(RANGE);
                            return d.epoch();
                        } catch (RangeTakenOverException e) {
                            return 0L; // refused: serves nothing
                        }
                    }));
                }
                long e1 = epochs.get(0).get();
                long e2 = epochs.get(1).get();
                assertThat(e1 == 0 && e2 == 0).as("one of them serves").isFalse();
                // both serving means one listed after the other's marker: a takeover at the next epoch, never two at one
                assertThat(e1 != e2 || e1 == 0).as("round " + round + ": epochs " + e1 + " and " + e2).isTrue();
            } finally {
                pool.shutdownNow();
            }
        }
    }

    @Test
    void archiveEpoch_readFromTheCatalogBeforeTheStoreOpens_andTheTakeoversEpochAfter() throws Exception {
        WorkerRangeData a = node("a", 0);
        assertThat(a.archiveEpoch()).as("an empty directory").isZero();
        DataStore sa = a.claim(RANGE);
        append(sa, RangeBlocks.blocks(5, 2, false));
        a.sync(sa);
        a.close();
        WorkerRangeTakeoverTest.copy(tmp.resolve("a"), tmp.resolve("a-copy"));
        WorkerRangeTakeoverTest.delete(tmp.resolve("a"));
        WorkerRangeData b = node("b", 0);
        b.claim(RANGE);
        assertThat(b.archiveEpoch()).isEqualTo(2);
        assertThat(b.knownArchiveEpoch()).isEqualTo(2);

        WorkerRangeData back = node("a-copy", 0); // the old node restarted: what its REGISTER says, before any claim
        assertThat(back.knownArchiveEpoch()).as("not read yet: the heartbeat never reads the disk").isZero();
        assertThat(back.archiveEpoch()).isEqualTo(1);
        assertThatThrownBy(() -> back.claim(RANGE)).hasMessageContaining("taken over at epoch 2");
        assertThat(back.archiveEpoch()).isEqualTo(1);
    }

    /**
     * Node b's first start crashed in its takeover at epoch 2 (after a synced the blocks returned): its
     * marker written, the directory marked, a partial catalog and a stray log file. Returns a's PBNs.
     */
    private long[] interruptedTakeover(byte[] raw) throws Exception {
        WorkerRangeData a = node("a", 0);
        DataStore sa = a.claim(RANGE);
        long[] p = append(sa, raw);
        a.sync(sa);
        a.close();
        WorkerRangeTakeoverTest.delete(tmp.resolve("a"));
        Path b = tmp.resolve("b").resolve(WorkerRangeData.DIRECTORY);
        RangeTakeover.claim(RangeTakeover.plan(WORKER, look), look, b.resolve("takeover-scratch"));
        Files.writeString(b.resolve(RangeEpochs.TAKEOVER_INCOMPLETE), "a takeover at epoch 2 began 2026-11-28T00:00:00Z\n");
        MetadataDb.open(b.resolve("catalog"), List.of(), false).close();
        Files.createDirectories(b.resolve("data"));
        Files.writeString(b.resolve("data").resolve("00000002.hfl"), "half a log");
        return p;
    }

    @Test
    void claim_takeoverInterruptedByACrash_resumesAtItsOwnEpoch_everyBlockReadsBack_noEpochUsedUp() throws Exception {
        byte[] raw = RangeBlocks.blocks(6, 6, false);
        long[] p = interruptedTakeover(raw);

        WorkerRangeData b = node("b", 0);
        DataStore sb = b.claim(RANGE);

        assertThat(b.epoch()).isEqualTo(2);
        assertReads(sb, p, raw);
        assertThat(tmp.resolve("b").resolve(WorkerRangeData.DIRECTORY).resolve(RangeEpochs.TAKEOVER_INCOMPLETE)).doesNotExist();
        assertThat(look.list(WorkerKeys.marker(WORKER, 3))).as("no epoch used up").isEmpty();
        byte[] more = RangeBlocks.blocks(7, 2, false);
        long[] q = append(sb, more);
        b.sync(sb);
        assertThat(q[0]).isGreaterThan(p[p.length - 1]);
        assertThat(look.list(WorkerKeys.space(WORKER, 2) + "/logs/")).hasSize(1);
    }

    @Test
    void claim_interruptedTakeoverWhoseRangeAnotherNodeTookOverSince_refusesAndLeavesTheDirectory() throws Exception {
        interruptedTakeover(RangeBlocks.blocks(8, 2, false));
        WorkerRangeData c = node("c", 0);
        c.claim(RANGE);
        assertThat(c.epoch()).as("c adopted through b's marker").isEqualTo(3);

        WorkerRangeData b = node("b", 0);
        assertThatThrownBy(() -> b.claim(RANGE)).isInstanceOf(StoreException.class)
                .hasMessageContaining("interrupted").hasMessageContaining("the bucket now holds epoch 3")
                .hasMessageContaining("move " + tmp.resolve("b").resolve(WorkerRangeData.DIRECTORY) + " away");
        assertThat(tmp.resolve("b").resolve(WorkerRangeData.DIRECTORY).resolve("catalog")).exists();
    }

    /**
     * Node b crashed in its takeover of worker 3 at epoch 2; an admin then gave its node name to worker
     * 4, whose range another node had taken over at epoch 2. Resumed as worker 4's, b would archive at
     * that node's epoch, adopting its logs, and never fence it: refused, naming both workers.
     */
    @Test
    void claim_interruptedTakeoverOfAnotherWorker_refusedNotResumedAtThisWorkersClaimedEpoch() throws Exception {
        interruptedTakeover(RangeBlocks.blocks(12, 2, false));
        Path b = tmp.resolve("b").resolve(WorkerRangeData.DIRECTORY);
        Files.writeString(b.resolve(RangeEpochs.TAKEOVER_INCOMPLETE), "a takeover at epoch 2 began 2026-11-28T00:00:00Z of worker "
                + WORKER + "\n"); // as this release writes it
        PbnRange four = new PbnRange(2_000_000, 3_000_000);
        WorkerRangeData x = node("x", 0);
        x.identify(4, 0);
        DataStore sx = x.claim(four);
        append(sx, RangeBlocks.blocks(13, 2, false));
        x.sync(sx);
        x.close();
        WorkerRangeTakeoverTest.delete(tmp.resolve("x"));
        WorkerRangeData y = node("y", 0);
        y.identify(4, 0);
        y.claim(four);
        assertThat(y.epoch()).as("y took worker 4 over").isEqualTo(2);

        WorkerRangeData again = node("b", 0);
        again.identify(4, 0);
        assertThatThrownBy(() -> again.claim(four)).isInstanceOf(StoreException.class)
                .hasMessageContaining("a takeover of worker 3's range at epoch 2 was interrupted")
                .hasMessageContaining("registered this node as worker 4").hasMessageContaining("away");
        assertThat(again.epoch()).isZero();
        assertThat(b.resolve("catalog")).as("nothing of it deleted").exists();
        assertThat(look.list(WorkerKeys.space(4, 2) + "/logs/")).isEmpty();
    }

    @Test
    void claim_oldNodesUploadAfterTheTakeover_deletedByTheOwnerAtItsNextRegistration_adoptedLogsKept() throws Exception {
        WorkerRangeData a = node("a", 0);
        DataStore sa = a.claim(RANGE);
        byte[] raw = RangeBlocks.blocks(9, 4, false);
        long[] p = append(sa, raw);
        a.sync(sa);
        WorkerRangeData b = node("b", 0);
        DataStore sb = b.claim(RANGE);
        assertThat(b.epoch()).isEqualTo(2);
        append(sa, RangeBlocks.blocks(10, 4, false));
        a.sync(sa); // a late upload under epoch 1: nobody reads it
        assertThat(look.list(WorkerKeys.space(WORKER, 1) + "/logs/")).hasSize(2);

        b.identify(WORKER, 0); // b's link registers again
        b.claim(RANGE);

        List<String> left = look.list(WorkerKeys.space(WORKER, 1) + "/logs/");
        assertThat(left).as("the adopted log only").hasSize(1);
        assertThat(new String(look.getRange(WorkerKeys.marker(WORKER, 2), 0, (int) look.size(WorkerKeys.marker(WORKER, 2)).getAsLong()),
                java.nio.charset.StandardCharsets.UTF_8)).contains("log " + left.get(0));
        assertReads(sb, p, raw);
        a.identify(WORKER, 0);
        assertThatThrownBy(() -> a.claim(RANGE)).hasMessageContaining("taken over at epoch 2");
    }

    @Test
    void claim_eachRegistration_listsTheWorkersKeysOnce_forItsFenceAndItsLateUploads() throws Exception {
        List<ObjectStore> clients = new ArrayList<>();
        java.util.function.Supplier<ObjectStore> counted = () -> {
            ObjectStore c = bucket.client();
            clients.add(c);
            return c;
        };
        WorkerRangeData a = node("a", 0, counted);
        DataStore sa = a.claim(RANGE); // a fresh store at epoch 1: the plan's listing, none for late uploads (none can exist)
        append(sa, RangeBlocks.blocks(14, 4, false));
        a.sync(sa);
        assertThat(lists(clients)).as("fresh").isEqualTo(1);
        a.identify(WORKER, 0); // its link registers again: the fence check
        a.claim(RANGE);
        assertThat(lists(clients)).as("registered again").isEqualTo(2);
        a.close();
        WorkerRangeData again = node("a", 0, counted); // restarted on its directory: the existing store's fence check
        again.claim(RANGE);
        assertThat(lists(clients)).as("restarted").isEqualTo(3);
    }

    /** LIST requests made so far by {@code clients}. */
    private static long lists(List<ObjectStore> clients) {
        return clients.stream().mapToLong(c -> c.stats().lists()).sum();
    }

    @Test
    void claim_oldNodeCompactedAnAdoptedLogAfterTheTakeover_itsCopyKeptNotDeleted() throws Exception {
        WorkerRangeData a = node("a", 0);
        DataStore sa = a.claim(RANGE);
        long[] p = append(sa, RangeBlocks.blocks(11, 4, false));
        a.sync(sa); // sealed and uploaded under epoch 1
        WorkerRangeData b = node("b", 0);
        assertThat(b.claim(RANGE).nextPbn()).as("b took the range over past a's blocks").isGreaterThan(p[3]);
        List<String> adopted = look.list(WorkerKeys.space(WORKER, 1) + "/logs/");
        assertThat(adopted).hasSize(1);
        // a, still running, compacts the adopted log after b listed the bucket: its copy (a later log epoch) goes up under
        // epoch 1, then the copy b adopted is deleted
        String old = adopted.get(0);
        long logEpoch = Long.parseLong(old.substring(old.length() - 4 - 16, old.length() - 4), 16);
        String copy = old.substring(0, old.length() - 4 - 16) + String.format("%016x", logEpoch + 1) + ".hfl";
        Path file = tmp.resolve("copy.hfl");
        Files.write(file, look.getRange(old, 0, (int) look.size(old).getAsLong()));
        assertThat(look.putIfAbsent(copy, file)).isTrue();
        look.delete(old);

        b.identify(WORKER, 0); // b's link registers again: it deletes late uploads
        b.claim(RANGE);

        assertThat(look.list(WorkerKeys.space(WORKER, 1) + "/logs/")).as("the only copy of the blocks at " + p[0] + "..")
                .containsExactly(copy);
        assertThat(Files.readAllBytes(file)).isEqualTo(look.getRange(copy, 0, (int) look.size(copy).getAsLong()));
    }

    @Test
    void compact_oldNodeWithoutALeaseBetweenATakeoversListingAndItsMarker_adoptedObjectStays_theTakeoverReadsEveryBlock()
            throws Exception {
        WorkerRangeData a = node("a", 0);
        MasterLease lease = new MasterLease(Duration.ofMillis(400));
        a.leaseDeletes(lease);
        lease.heard(System.nanoTime()); // REGISTERED
        DataStore sa = a.claim(RANGE);
        byte[] raw = RangeBlocks.blocks(12, 8, false);
        long[] p = append(sa, raw);
        a.sync(sa); // sealed and uploaded under epoch 1
        String old = look.list(WorkerKeys.space(WORKER, 1) + "/logs/").get(0);
        Thread.sleep(250); // a is cut off from the master: no acknowledgement for over lost-after/2
        assertThat(lease.safeNanos()).isNotPositive();
        // b has listed the bucket (adopting a's log) but not yet written its marker when a compacts that log: no fence to see yet
        int[] rewritten = new int[1];
        WorkerRangeData b = node("b", 0, () -> new PausedMarkerStore(bucket.client(), "/adopted", () -> {
            LocationTestAccess.free(sa, java.util.Arrays.copyOf(p, 6)); // a's GC freed blocks
            rewritten[0] = new Compactor(sa).run(Compactor.DEFAULT_THRESHOLD, Long.MAX_VALUE).logsRewritten();
        }));
        DataStore sb = b.claim(RANGE);
        assertThat(b.epoch()).isEqualTo(2);
        assertThat(rewritten[0]).isEqualTo(1);

        assertReads(sb, p, raw);
        // a's copy is a late upload, which b deletes as the owner; the object b adopted stays
        assertThat(look.list(WorkerKeys.space(WORKER, 1) + "/logs/")).as("the adopted object").containsExactly(old);
        assertThat(sa.archive().deletesPending()).as("the delete waits in the catalog").isEqualTo(1);
    }

    @Test
    void compact_withALease_deletesTheReplacedObjectAsBefore() throws Exception {
        WorkerRangeData a = node("a", 0);
        MasterLease lease = new MasterLease(Duration.ofSeconds(60));
        a.leaseDeletes(lease);
        lease.heard(System.nanoTime());
        DataStore sa = a.claim(RANGE);
        long[] p = append(sa, RangeBlocks.blocks(13, 8, false));
        a.sync(sa);
        String old = look.list(WorkerKeys.space(WORKER, 1) + "/logs/").get(0);

        LocationTestAccess.free(sa, java.util.Arrays.copyOf(p, 6));
        assertThat(new Compactor(sa).run(Compactor.DEFAULT_THRESHOLD, Long.MAX_VALUE).logsRewritten()).isEqualTo(1);

        assertThat(look.list(WorkerKeys.space(WORKER, 1) + "/logs/")).as("only the compacted copy").hasSize(1).doesNotContain(old);
        assertThat(sa.archive().deletesPending()).isZero();
    }

    private static void assertReads(DataStore s, long[] pbns, byte[] raw) {
        StoredBlock b = new StoredBlock();
        for (int k = 0; k < pbns.length; k++) {
            s.read(pbns[k], b);
            byte[] got = java.util.Arrays.copyOfRange(b.data(), b.dataOffset(), b.dataOffset() + b.storedLength());
            assertThat(got).as("PBN " + pbns[k]).isEqualTo(java.util.Arrays.copyOfRange(raw, k * BS, (k + 1) * BS));
        }
    }
}
