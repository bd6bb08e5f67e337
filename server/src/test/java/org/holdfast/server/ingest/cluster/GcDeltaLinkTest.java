package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.model.DeltaEntry;
import org.holdfast.common.protocol.GcDelta;
import org.holdfast.gc.bookkeeping.GcBookkeeper;
import org.holdfast.gc.bookkeeping.GcOperation;
import org.holdfast.gc.bookkeeping.UpdateRouter;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.gc.bosc.BoscSettings;
import org.holdfast.gc.bosc.UpdateBatch;
import org.holdfast.gc.retention.RangeMaxExpiry;
import org.holdfast.server.cluster.LoadProbe;
import org.holdfast.server.cluster.MembershipSettings;
import org.holdfast.server.security.AuditLog;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Distributed GC over a real link (a master's cluster port and two workers' connectors in one JVM,
 * real sockets, real GMA and BOSC files): a sequence of GC operations, routed by PBN range to the
 * master's own GC metadata and the two workers', leaves every GMA with exactly the counts one
 * standalone GMA fed the same operations has for its PBNs; a replay after a reconnect changes
 * nothing; a worker killed without a sync recovers its log, and the master's resend of what it has
 * no acknowledgement for brings it to the same counts.
 */
class GcDeltaLinkTest {
    /** Worker ranges low enough that one standalone GMA over all of them stays small. */
    private static final long FIRST = 1_000_000;
    private static final long SIZE = 100_000;
    private static final PbnRange MASTER_RANGE = new PbnRange(1, FIRST);
    private static final long DAY = 86_400_000L;
    private static final BoscSettings BOSC = BoscSettings.defaults().withCommitters(1);

    @TempDir
    Path dir;
    private TestMaster master;
    private Path tokenFile;
    private final Node[] nodes = {new Node("w1"), new Node("w2")};
    private BoscPipeline masterGc;
    private BoscPipeline reference;
    private GcBookkeeper referenceBook;
    private UpdateRouter router;
    private UpdateBatch[] shares;
    private final Random random = new Random(19);
    private final Volume volume = new Volume(300);

    /** One worker process: its GC metadata (kept across its connections) and its link. */
    private final class Node {
        final String name;
        WorkerGcMetadata gc;
        WorkerConnector link;
        /** Per operation id, the share sent to this worker and its acknowledgement. */
        final TreeMap<Long, Sent> sent = new TreeMap<>();

        Node(String name) {
            this.name = name;
        }

        void start() {
            if (gc == null) {
                gc = new WorkerGcMetadata(dir.resolve(name).resolve("range-data").resolve("gc"), BOSC);
            }
            link = new WorkerConnector(master.linkSettings(name, tokenFile), new LoadProbe(dir), null, null, gc);
            link.start();
            await().atMost(Duration.ofSeconds(20)).until(() -> link.status().connected() && deltas() != null);
        }

        long id() {
            return link.status().assignment().workerId();
        }

        PbnRange range() {
            return link.status().assignment().range();
        }

        /** The master's end of this worker's GC deltas, once its link is up. */
        RemoteGcDeltas deltas() {
            return link.status().assignment() == null ? null : master.server.gcDeltas().up(id());
        }

        void stopLink() {
            link.close();
        }

        /** A killed process: the link drops and the GC metadata is neither synced nor checkpointed. */
        void kill() {
            link.close();
            gc.abandon();
            gc = null;
        }

        void close() {
            if (link != null) {
                link.close();
            }
            if (gc != null) {
                gc.close();
            }
        }
    }

    private record Sent(UpdateBatch share, CompletableFuture<Void> applied) {
    }

    /** A volume's map, committed through the operations the test routes. */
    private static final class Volume {
        final VolumeId id = new VolumeId("v");
        final long[] map;
        final long[] birth;
        final RangeMaxExpiry expiries = new RangeMaxExpiry();
        long seq;

        Volume(int lbns) {
            map = new long[lbns];
            birth = new long[lbns];
        }
    }

    @BeforeEach
    void start() throws Exception {
        // heartbeats every second: a worker takes 5 s of silence for a dead master, so a loaded machine does not cut the links
        master = new TestMaster(dir.resolve("catalog"), new MembershipSettings(Duration.ofSeconds(1), Duration.ofSeconds(3),
                Duration.ofSeconds(10), FIRST, SIZE), AuditLog.NONE);
        tokenFile = dir.resolve("worker.token");
        Files.writeString(tokenFile, master.workerToken());
        for (Node n : nodes) {
            n.start(); // one after the other: w1 gets worker id 1
        }
        masterGc = BoscPipeline.open(dir.resolve("master-gc"), BOSC, MASTER_RANGE);
        reference = BoscPipeline.open(dir.resolve("reference-gc"), BOSC);
        referenceBook = new GcBookkeeper(reference);
        router = new UpdateRouter(List.of(MASTER_RANGE, nodes[0].range(), nodes[1].range()));
        shares = new UpdateBatch[] {new UpdateBatch(), new UpdateBatch(), new UpdateBatch()};
        assertThat(nodes[0].range()).isEqualTo(new PbnRange(FIRST, FIRST + SIZE));
        assertThat(nodes[1].range()).isEqualTo(new PbnRange(FIRST + SIZE, FIRST + 2 * SIZE));
    }

    @AfterEach
    void stop() {
        for (Node n : nodes) {
            n.close();
        }
        master.close();
        masterGc.close();
        reference.close();
    }

    /** A PBN of the master's, w1's or w2's range (a few of each, so counts add up). */
    private long pbn() {
        int owner = random.nextInt(3);
        long base = owner == 0 ? 1 : owner == 1 ? FIRST : FIRST + SIZE;
        return base + random.nextInt(60);
    }

    private long[] pbns(int n) {
        long[] p = new long[n];
        for (int i = 0; i < n; i++) {
            p[i] = pbn();
        }
        return p;
    }

    /** The next operation: mostly commits of 1..40 changed LBNs, now and then a hold, its release, a retention raise or a deletion. */
    private GcOperation nextOperation(int k) {
        switch (k % 7) {
            case 3:
                return new GcOperation.Pin(pbns(12));
            case 4:
                return new GcOperation.Unpin(pbns(5));
            case 5:
                return new GcOperation.RaiseExpiry(pbns(9), 1_800_000_000_000L + k * DAY);
            case 6:
                return new GcOperation.Release(pbns(4));
            default:
                break;
        }
        volume.seq++;
        List<DeltaEntry> delta = new ArrayList<>();
        int n = 1 + random.nextInt(40);
        java.util.BitSet seen = new java.util.BitSet();
        for (int i = 0; i < n; i++) {
            int lbn = random.nextInt(volume.map.length);
            if (seen.get(lbn)) {
                continue;
            }
            seen.set(lbn);
            long to = random.nextInt(8) == 0 ? 0 : pbn();
            delta.add(new DeltaEntry(lbn, volume.map[lbn], volume.map[lbn] == 0 ? 0 : volume.birth[lbn], to));
            volume.map[lbn] = to;
            volume.birth[lbn] = volume.seq;
        }
        delta.sort((a, b) -> Long.compare(a.lbn(), b.lbn()));
        GcOperation op = new GcOperation.Commit(volume.id, volume.seq, delta, volume.expiries);
        return op;
    }

    /**
     * Applies operation {@code opId} as the master's GC would once distributed: the reference
     * standalone GMA logs all of it; the router splits it; the master logs its own share and sends
     * each worker's.
     */
    private void route(long opId, GcOperation op) {
        UpdateBatch all = GcBookkeeper.updatesOf(op);
        referenceBook.apply(opId, op);
        if (op instanceof GcOperation.Commit c) {
            volume.expiries.append(c.sequence(), 1_700_000_000_000L + c.sequence() * DAY);
        }
        router.route(opId, all, shares);
        if (shares[0].size() > 0) {
            masterGc.appendGroup(opId, shares[0]);
        }
        for (int w = 0; w < 2; w++) {
            if (shares[w + 1].size() > 0) {
                UpdateBatch copy = new UpdateBatch(shares[w + 1].size());
                copy.addAll(shares[w + 1]);
                RemoteGcDeltas link = nodes[w].deltas();
                CompletableFuture<Void> applied = link != null ? link.send(opId, copy)
                        : CompletableFuture.failedFuture(new RangeWorkerLostException(nodes[w].name + " is down"));
                nodes[w].sent.put(opId, new Sent(copy, applied));
            }
        }
    }

    /** Routes operations {@code from .. to} (ids as given). */
    private void routeAll(long from, long to) {
        for (long id = from; id <= to; id++) {
            route(id, nextOperation((int) id));
        }
    }

    private static void awaitApplied(Node n) {
        for (Sent s : n.sent.values()) {
            s.applied().orTimeout(30, TimeUnit.SECONDS).join();
        }
    }

    /** Every USED slot of {@code p} as "rc/pins/flags/expiry", by PBN. */
    private static TreeMap<Long, String> dump(BoscPipeline p) {
        p.commitAll();
        TreeMap<Long, String> out = new TreeMap<>();
        p.gma().scan(p.chunkLimit(), (pbn, rc, pins, flags, expiry) -> out.put(pbn, rc + "/" + pins + "/" + flags + "/" + expiry));
        return out;
    }

    /** The reference's slots of {@code r}'s PBNs. */
    private TreeMap<Long, String> expected(PbnRange r) {
        return new TreeMap<>(dump(reference).subMap(r.first(), r.limit()));
    }

    private void assertSameCounts() {
        for (Node n : nodes) {
            assertThat(dump(n.gc.pipeline())).as("GMA of " + n.name + " " + n.range()).isNotEmpty().isEqualTo(expected(n.range()));
        }
        assertThat(dump(masterGc)).as("the master's own GMA").isNotEmpty().isEqualTo(expected(MASTER_RANGE));
    }

    @Test
    void route_operationsToTwoWorkersAndTheMaster_eachGmaHoldsTheStandaloneCounts() {
        routeAll(1, 60);
        for (Node n : nodes) {
            awaitApplied(n);
            assertThat(n.deltas().appliedDeltaId()).as(n.name + " acknowledged its last delta")
                    .isEqualTo(GcDelta.deltaId(n.sent.lastKey(), 0));
        }
        assertSameCounts();
        assertThat(nodes[0].gc.pipeline().lastOpId()).isEqualTo(GcDelta.deltaId(nodes[0].sent.lastKey(), 0));
    }

    @Test
    void route_operationOverOneFrame_sentAsPartsAndLoggedWithTheStandaloneCounts() {
        routeAll(1, 5);
        long[] held = new long[150_000]; // a hold on a large snapshot: 150,000 PBNs, 70,000 of them in w1's range
        for (int i = 0; i < held.length; i++) {
            held[i] = i < 70_000 ? FIRST + i : 1 + i;
        }
        route(6, new GcOperation.Pin(held));
        route(7, new GcOperation.RaiseExpiry(held, 1_900_000_000_000L));
        awaitApplied(nodes[0]);
        awaitApplied(nodes[1]);
        assertThat(nodes[0].deltas().appliedDeltaId()).as("w1's share of the hold: two parts").isEqualTo(GcDelta.deltaId(7, 1));
        assertSameCounts();
    }

    @Test
    void resend_afterAReconnect_answeredTheSameAndChangesNothing() {
        routeAll(1, 30);
        awaitApplied(nodes[0]);
        awaitApplied(nodes[1]);
        Node w1 = nodes[0];
        long mark = w1.deltas().appliedDeltaId();
        long logged = w1.gc.pipeline().updatesLogged();
        TreeMap<Long, String> before = dump(w1.gc.pipeline());
        w1.stopLink();
        w1.start(); // the same process registers again: its GC metadata stays open
        RemoteGcDeltas again = w1.deltas();
        List<CompletableFuture<Void>> resent = new ArrayList<>();
        for (Map.Entry<Long, Sent> e : w1.sent.entrySet()) {
            resent.add(again.send(e.getKey(), e.getValue().share()));
        }
        CompletableFuture.allOf(resent.toArray(new CompletableFuture[0])).orTimeout(30, TimeUnit.SECONDS).join();
        assertThat(again.appliedDeltaId()).as("every replay answered with the same mark").isEqualTo(mark);
        assertThat(w1.gc.pipeline().updatesLogged()).as("nothing logged again").isEqualTo(logged);
        assertThat(dump(w1.gc.pipeline())).isEqualTo(before);
        routeAll(31, 45); // and later operations go on from there
        awaitApplied(nodes[0]);
        awaitApplied(nodes[1]);
        assertSameCounts();
    }

    @Test
    void killedWorker_reopenedAndSentWhatWasNotAcknowledged_recoversToTheStandaloneCounts() {
        routeAll(1, 10);
        awaitApplied(nodes[0]);
        awaitApplied(nodes[1]);
        Node w1 = nodes[0];
        routeAll(11, 40); // not awaited: the kill lands somewhere in these
        w1.kill();
        routeAll(41, 60); // while it is down: the master keeps w1's shares unacknowledged
        long acknowledged = 0;
        List<Long> unacknowledged = new ArrayList<>();
        await().atMost(Duration.ofSeconds(20)).until(() -> w1.sent.values().stream().allMatch(s -> s.applied().isDone()));
        for (Map.Entry<Long, Sent> e : w1.sent.entrySet()) {
            if (e.getValue().applied().isCompletedExceptionally()) {
                unacknowledged.add(e.getKey());
            } else {
                acknowledged = Math.max(acknowledged, e.getKey());
            }
        }
        assertThat(unacknowledged).as("what was routed while it was down").contains(w1.sent.lastKey());
        w1.start(); // a new process: reopening the GC metadata replays its log
        assertThat(w1.gc.pipeline().lastOpId()).as("every acknowledged delta survived the kill")
                .isGreaterThanOrEqualTo(GcDelta.deltaId(acknowledged, 0));
        RemoteGcDeltas again = w1.deltas();
        for (long opId : unacknowledged) {
            Sent s = w1.sent.get(opId);
            w1.sent.put(opId, new Sent(s.share(), again.send(opId, s.share())));
        }
        awaitApplied(w1);
        awaitApplied(nodes[1]);
        assertSameCounts();
    }
}
