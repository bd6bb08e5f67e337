package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import org.holdfast.common.id.PbnRange;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.gc.bosc.BoscSettings;
import org.holdfast.gc.gma.GmaChunk.UpdateKinds;
import org.holdfast.gc.sweep.GraceGuard;
import org.holdfast.gc.sweep.Sweeper;
import org.holdfast.server.catalog.ReferenceGuard;
import org.holdfast.server.cluster.LoadProbe;
import org.holdfast.server.cluster.MembershipSettings;
import org.holdfast.server.gc.ReclaimedBlockException;
import org.holdfast.server.security.AuditLog;
import org.holdfast.server.store.BlocksUnavailableException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The grace protection of a backup's blocks on the worker that owns them, over a real link (a
 * master's cluster port and two workers' connectors in one JVM, real sockets, real GMA and BOSC
 * files, a real gc-engine sweep over a worker's GC metadata): a protection raises the expiry in the
 * owner's GMA; a PBN the owner's sweep chose is refused (strict: nothing protected; zero-refused:
 * exactly it); a session's end, and the end of the link, release the owner's sweep horizon; a call
 * split across the master and two workers reaches each owner with its PBNs only.
 */
class GcGuardLinkTest {
    private static final long FIRST = 1_000_000;
    private static final long SIZE = 100_000;
    private static final PbnRange MASTER_RANGE = new PbnRange(1, FIRST);
    private static final BoscSettings BOSC = BoscSettings.defaults().withCommitters(1);
    private static final long GRACE = Duration.ofHours(24).toMillis();

    @TempDir
    Path dir;
    private TestMaster master;
    private Path tokenFile;
    private final Node[] nodes = {new Node("w1"), new Node("w2")};
    private BoscPipeline masterGc;
    private GraceGuard masterGuard;
    private RangeReferenceGuard guard;

    /** One worker process: its GC metadata (kept across its connections) and its link. */
    private final class Node {
        final String name;
        WorkerGcMetadata gc;
        WorkerConnector link;

        Node(String name) {
            this.name = name;
        }

        void start() {
            if (gc == null) {
                gc = new WorkerGcMetadata(dir.resolve(name).resolve("range-data").resolve("gc"), BOSC);
            }
            link = new WorkerConnector(master.linkSettings(name, tokenFile), new LoadProbe(dir), null, null, gc);
            link.start();
            await().atMost(Duration.ofSeconds(20)).until(() -> link.status().connected() && remote() != null && gc.guard() != null);
        }

        PbnRange range() {
            return link.status().assignment().range();
        }

        /** The master's end of this worker's guard, once its link is up. */
        RemoteGcGuard remote() {
            return link.status().assignment() == null ? null : master.server.gcGuards().up(link.status().assignment().workerId());
        }

        GraceGuard guard() {
            return gc.guard();
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

    /** The master's own range, guarded as the standalone GcReferenceGuard guards it (a real GraceGuard over a real GMA). */
    private final class MasterOwnGuard implements ReferenceGuard {
        @Override
        public void protect(long sessionId, long[] pbns, int off, int count) {
            if (masterGuard.protect(sessionId, pbns, off, count, false) > 0) {
                throw new ReclaimedBlockException(pbns[off]);
            }
        }

        @Override
        public int protectOrRefuse(long sessionId, long[] pbns, int off, int count) {
            return masterGuard.protect(sessionId, pbns, off, count, true);
        }

        @Override
        public void release(long sessionId, boolean committed) {
            masterGuard.sessionEnded(sessionId);
        }
    }

    @BeforeEach
    void start() throws Exception {
        master = new TestMaster(dir.resolve("catalog"), new MembershipSettings(Duration.ofSeconds(1), Duration.ofSeconds(3),
                Duration.ofSeconds(10), FIRST, SIZE), AuditLog.NONE);
        tokenFile = dir.resolve("worker.token");
        Files.writeString(tokenFile, master.workerToken());
        for (Node n : nodes) {
            n.start(); // one after the other: w1 gets worker id 1
        }
        assertThat(nodes[0].range()).isEqualTo(new PbnRange(FIRST, FIRST + SIZE));
        assertThat(nodes[1].range()).isEqualTo(new PbnRange(FIRST + SIZE, FIRST + 2 * SIZE));
        masterGc = BoscPipeline.open(dir.resolve("master-gc"), BOSC, MASTER_RANGE);
        masterGuard = new GraceGuard(masterGc, Clock.systemUTC(), Duration.ofHours(24), Duration.ofMinutes(10));
        guard = new RangeReferenceGuard(MASTER_RANGE, new MasterOwnGuard(), master.server.gcGuards());
    }

    @AfterEach
    void stop() {
        for (Node n : nodes) {
            n.close();
        }
        master.close();
        masterGc.close();
    }

    /** The expiry in {@code p}'s GMA of {@code pbn}, with every update logged so far applied. */
    private static long expiry(BoscPipeline p, long pbn) {
        long[] et = new long[1];
        p.awaitEnqueued();
        p.withCurrentChunk(p.layout().chunkOf(pbn), c -> et[0] = c.expiry(p.layout().slotOf(pbn)));
        return et[0];
    }

    /** Has {@code n}'s own sweep choose {@code victim} (RC 0, expired): it is freed and tombstoned in its guard. */
    private static void sweptByItsOwner(Node n, long victim) {
        BoscPipeline p = n.gc.pipeline();
        p.appendSingle(UpdateKinds.RAISE_EXPIRY, victim, 1_000); // a block whose grace ran out long ago, counted by nobody
        List<Long> reclaimed = new ArrayList<>();
        Sweeper sweeper = new Sweeper(p, n.guard(), (pbns, count) -> {
            for (int i = 0; i < count; i++) {
                reclaimed.add(pbns[i]);
            }
        }, 16);
        sweeper.sweep(n.guard().sweepHorizon(System.currentTimeMillis()));
        assertThat(reclaimed).as("the worker's sweep frees it").containsExactly(victim);
        assertThat(n.guard().isTombstoned(victim)).isTrue();
    }

    @Test
    void protect_workersPbns_raisesTheExpiryInTheOwnersGma() {
        Node w1 = nodes[0];
        long p = FIRST + 5;
        long before = System.currentTimeMillis();
        assertThat(w1.remote().protect(7, new long[] {p, p + 1}, 0, 2, false).join()).isEmpty();
        BoscPipeline gma = w1.gc.pipeline();
        assertThat(expiry(gma, p)).as("ET = now + grace, by the worker's clock").isBetween(before + GRACE, System.currentTimeMillis() + GRACE);
        assertThat(expiry(gma, p + 1)).isGreaterThanOrEqualTo(before + GRACE);
        assertThat(gma.updatesLogged()).isEqualTo(2);
        assertThat(w1.guard().openSessions()).as("tied to the session").isEqualTo(1);
        assertThat(nodes[1].gc.pipeline().updatesLogged()).as("the other worker saw nothing").isZero();
    }

    @Test
    void protect_pbnTheOwnersSweepChose_strictFailsWithNothingProtected() {
        Node w1 = nodes[0];
        long victim = FIRST + 40;
        sweptByItsOwner(w1, victim);
        long logged = w1.gc.pipeline().updatesLogged();
        long[] pbns = {FIRST + 1, victim, FIRST + 2};
        assertThat(w1.remote().protect(3, pbns, 0, 3, false).join()).as("the worker names the refused entry").containsExactly(1);
        assertThat(w1.gc.pipeline().updatesLogged()).as("a refused strict call protects nothing").isEqualTo(logged);
        assertThatThrownBy(() -> guard.protect(3, pbns, 0, 3)).isInstanceOf(ReclaimedBlockException.class)
                .hasMessageContaining("block " + victim + " is being reclaimed");
        assertThat(pbns).as("strict leaves the array").containsExactly(FIRST + 1, victim, FIRST + 2);
        assertThat(w1.gc.pipeline().updatesLogged()).isEqualTo(logged);
        assertThat(expiry(w1.gc.pipeline(), FIRST + 1)).isZero();
    }

    @Test
    void protectOrRefuse_pbnTheOwnersSweepChose_zeroesExactlyItAndProtectsTheRest() {
        Node w2 = nodes[1];
        long victim = FIRST + SIZE + 40;
        sweptByItsOwner(w2, victim);
        long before = System.currentTimeMillis();
        long[] pbns = {0, FIRST + SIZE + 1, victim, 7, FIRST + SIZE + 2};
        assertThat(guard.protectOrRefuse(4, pbns, 0, pbns.length)).isEqualTo(1);
        assertThat(pbns).containsExactly(0, FIRST + SIZE + 1, 0, 7, FIRST + SIZE + 2);
        assertThat(expiry(w2.gc.pipeline(), FIRST + SIZE + 1)).isGreaterThanOrEqualTo(before + GRACE);
        assertThat(expiry(w2.gc.pipeline(), FIRST + SIZE + 2)).isGreaterThanOrEqualTo(before + GRACE);
        assertThat(expiry(w2.gc.pipeline(), victim)).as("the freed block is not raised").isEqualTo(1_000);
        assertThat(expiry(masterGc, 7)).as("the master's own PBN, locally").isGreaterThanOrEqualTo(before + GRACE);
    }

    @Test
    void release_endsTheSessionOnTheWorker_itsSweepHorizonIsFreeAgain() {
        Node w1 = nodes[0];
        long[] pbns = {FIRST + 9, 3};
        guard.protect(21, pbns, 0, 2);
        long later = System.currentTimeMillis() + 2 * GRACE;
        assertThat(w1.guard().sweepHorizon(later)).as("the open session holds the horizon back").isLessThan(later);
        assertThat(masterGuard.openSessions()).isEqualTo(1);
        guard.release(21, true);
        await().atMost(Duration.ofSeconds(10)).until(() -> w1.guard().openSessions() == 0);
        assertThat(w1.guard().sweepHorizon(later)).isEqualTo(later);
        assertThat(masterGuard.openSessions()).isZero();
        assertThat(guard.openSessions()).isZero();
        assertThat(expiry(w1.gc.pipeline(), FIRST + 9)).as("the raised expiry stays").isGreaterThan(System.currentTimeMillis());
    }

    @Test
    void linkEnds_theWorkerEndsItsSessions_andTheSessionFailsOnTheMaster() {
        Node w1 = nodes[0];
        guard.protectOrRefuse(31, new long[] {FIRST + 11}, 0, 1);
        guard.protectOrRefuse(32, new long[] {FIRST + 12}, 0, 1);
        assertThat(w1.guard().openSessions()).isEqualTo(2);
        w1.link.close(); // the link ends; the worker process (its GC metadata) stays
        await().atMost(Duration.ofSeconds(10)).until(() -> w1.guard().openSessions() == 0);
        assertThat(w1.guard().sweepHorizon(Long.MAX_VALUE)).isEqualTo(Long.MAX_VALUE);
        w1.start(); // registered again: a new link
        assertThatThrownBy(() -> guard.protectOrRefuse(31, new long[] {FIRST + 13}, 0, 1)).isInstanceOf(BlocksUnavailableException.class)
                .hasMessageContaining("the link to worker w1").hasMessageContaining("ended after this backup protected blocks on it");
        guard.release(31, false); // the failed session ends (it protected its block over the new link all the same)
        await().atMost(Duration.ofSeconds(10)).until(() -> w1.guard().openSessions() == 0);
        assertThat(guard.protectOrRefuse(33, new long[] {FIRST + 13}, 0, 1)).as("a new session protects over the new link").isZero();
        assertThat(w1.guard().openSessions()).isEqualTo(1);
    }

    @Test
    void protect_pbnsOfTheMasterAndTwoWorkers_eachGoesToItsOwner() {
        long[] pbns = new long[90];
        for (int i = 0; i < 30; i++) {
            pbns[3 * i] = 100 + i; // the master's
            pbns[3 * i + 1] = FIRST + 1000 + i; // w1's
            pbns[3 * i + 2] = FIRST + SIZE + 2000 + i; // w2's
        }
        long before = System.currentTimeMillis();
        guard.protect(41, pbns, 0, pbns.length);
        assertThat(masterGc.updatesLogged()).isEqualTo(30);
        assertThat(nodes[0].gc.pipeline().updatesLogged()).isEqualTo(30);
        assertThat(nodes[1].gc.pipeline().updatesLogged()).isEqualTo(30);
        for (int i = 0; i < 30; i++) {
            assertThat(expiry(masterGc, 100 + i)).isGreaterThanOrEqualTo(before + GRACE);
            assertThat(expiry(nodes[0].gc.pipeline(), FIRST + 1000 + i)).isGreaterThanOrEqualTo(before + GRACE);
            assertThat(expiry(nodes[1].gc.pipeline(), FIRST + SIZE + 2000 + i)).isGreaterThanOrEqualTo(before + GRACE);
        }
        assertThat(nodes[0].guard().openSessions()).isEqualTo(1);
        assertThat(nodes[1].guard().openSessions()).isEqualTo(1);
        assertThat(guard.counted(FIRST + 1000)).as("the master holds no counts of a worker's range").isFalse();
    }

    @Test
    void protect_pbnOfNoKnownRange_failsAfterTheKnownWorkersShareIsProtected() {
        long[] pbns = {FIRST + 1, FIRST + 5 * SIZE};
        assertThatThrownBy(() -> guard.protect(51, pbns, 0, 2)).isInstanceOf(BlocksUnavailableException.class)
                .hasMessageContaining("PBN " + (FIRST + 5 * SIZE) + " lives on a worker that is not connected");
        // protecting w1's block only keeps it for the grace; the failed session ends there when released
        assertThat(nodes[0].gc.pipeline().updatesLogged()).isEqualTo(1);
        assertThat(nodes[0].guard().openSessions()).isEqualTo(1);
        guard.release(51, false);
        await().atMost(Duration.ofSeconds(10)).until(() -> nodes[0].guard().openSessions() == 0);
    }

    @Test
    void protect_oneWorkerNotConnected_failsAfterTheConnectedWorkersShareIsProtected() {
        nodes[1].link.close(); // w2's link ends (the master forgets its guard)
        await().atMost(Duration.ofSeconds(10)).until(() -> master.server.gcGuards().up(2) == null);
        long[] pbns = {FIRST + 21, FIRST + SIZE + 21};
        assertThatThrownBy(() -> guard.protect(61, pbns, 0, 2)).isInstanceOf(BlocksUnavailableException.class)
                .hasMessageContaining("PBN " + (FIRST + SIZE + 21) + " lives on a worker that is not connected");
        // w1's stores of the failed backup are protected there, so they stop holding its sweep (AnsweredStores)
        assertThat(nodes[0].guard().openSessions()).isEqualTo(1);
        assertThat(expiry(nodes[0].gc.pipeline(), FIRST + 21)).isGreaterThan(System.currentTimeMillis());
        guard.release(61, false);
        await().atMost(Duration.ofSeconds(10)).until(() -> nodes[0].guard().openSessions() == 0);
    }
}
