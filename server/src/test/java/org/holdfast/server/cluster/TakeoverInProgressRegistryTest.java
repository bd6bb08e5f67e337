package org.holdfast.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.holdfast.server.cluster.RegistryFixture.CAP;
import static org.holdfast.server.cluster.RegistryFixture.TOKEN;

import java.time.Duration;
import org.holdfast.server.engine.SteppingClock;
import org.junit.jupiter.api.Test;

/**
 * While a node takes a worker's archived range over (registered with empty range-data, reading the
 * dead node's logs before it claims the next epoch), the old node back with its own range-data is
 * refused: let in, it would serve on its open store until the claim and lose what it uploads after it
 * (deleted as late uploads). The hold ends when the taker claims, reports its store refused, or has
 * been silent for lost-after (died mid-read), so the old node is never locked out for good.
 */
class TakeoverInProgressRegistryTest {
    private final SteppingClock clock = RegistryFixture.clock();
    private final MembershipSettings settings = RegistryFixture.SETTINGS;

    /** Old node w1 served at epoch 1 and was lost; a new node of w1 with empty range-data registered and its link dropped mid-read. */
    private WorkerRecord takerDroppedMidRead(WorkerRegistry r) {
        WorkerRecord old = r.register("w1", TOKEN, "127.0.0.2:1", CAP, "v", 1);
        assertThat(r.archivedAt(old.workerId(), old.epoch(), 1, true)).isTrue();
        r.disconnected(old.workerId(), old.epoch());
        clock.advance(settings.lostAfter());
        WorkerRecord taker = r.register("w1", TOKEN, "127.0.0.3:1", CAP, "v", 0);
        clock.advance(Duration.ofSeconds(2));
        assertThat(r.heartbeat(taker.workerId(), taker.epoch(), WorkerLoad.NONE)).isTrue(); // reading: its store is not open yet
        r.disconnected(taker.workerId(), taker.epoch());
        return taker;
    }

    private static void assertHeldOff(Runnable register, String heard) {
        assertThatThrownBy(register::run).isInstanceOfSatisfying(RegistrationRefusedException.class,
                        e -> assertThat(e.reason()).isEqualTo(RegistrationRefusedException.Reason.TAKEOVER_IN_PROGRESS))
                .hasMessageContaining("worker 1 is being taken over by another node")
                .hasMessageContaining("before it claims epoch 2; heard " + heard + " ago")
                .hasMessageContaining("this node's range-data archives at epoch 1")
                .hasMessageContaining("deleted as a late upload")
                .hasMessageContaining("silent for holdfast.cluster.lost-after (15.0s");
    }

    @Test
    void oldNodeBackWhileTheTakersLinkIsDown_refusedChangingNothing_thenTakenOverOnceTheTakerClaims() {
        WorkerRegistry r = new WorkerRegistry(MembershipStore.inMemory(), settings, clock);
        WorkerRecord taker = takerDroppedMidRead(r);
        clock.advance(Duration.ofSeconds(3));

        // without the hold it registered here and served on its open store until the taker's claim
        assertHeldOff(() -> r.register("w1", TOKEN, "127.0.0.2:2", CAP, "v", 1), "3.0s");
        assertThat(r.workers()).singleElement().satisfies(v -> {
            assertThat(v.epoch()).as("no registration counted").isEqualTo(taker.epoch());
            assertThat(v.address()).isEqualTo("127.0.0.3:1");
        });

        // the taker claimed epoch 2 and comes back: not held (above every epoch heard), and its report ends the takeover
        WorkerRecord claimed = r.register("w1", TOKEN, "127.0.0.3:2", CAP, "v", 2);
        assertThat(r.archivedAt(claimed.workerId(), claimed.epoch(), 2, true)).isTrue();
        r.disconnected(claimed.workerId(), claimed.epoch());
        assertThatThrownBy(() -> r.register("w1", TOKEN, "127.0.0.2:3", CAP, "v", 1))
                .isInstanceOfSatisfying(RegistrationRefusedException.class,
                        e -> assertThat(e.reason()).isEqualTo(RegistrationRefusedException.Reason.TAKEN_OVER));
    }

    @Test
    void takerDiesMidRead_theOldNodeRegistersAgainAfterLostAfterOfItsSilence() {
        WorkerRegistry r = new WorkerRegistry(MembershipStore.inMemory(), settings, clock);
        WorkerRecord taker = takerDroppedMidRead(r);
        clock.advance(settings.lostAfter().minusMillis(1));
        assertHeldOff(() -> r.register("w1", TOKEN, "127.0.0.2:2", CAP, "v", 1), "15.0s");
        clock.advance(Duration.ofMillis(1));

        WorkerRecord back = r.register("w1", TOKEN, "127.0.0.2:2", CAP, "v", 1);
        assertThat(back.epoch()).as("nothing was handed over: the old node serves again").isEqualTo(taker.epoch() + 1);
        assertThat(r.state(back.workerId())).isEqualTo(MemberState.UP);
        r.disconnected(back.workerId(), back.epoch());
        assertThat(r.register("w1", TOKEN, "127.0.0.2:3", CAP, "v", 1).epoch()).as("and at once after a flap: no hold left")
                .isEqualTo(back.epoch() + 1);
    }

    @Test
    void takerReportsItsStoreRefused_theOldNodeRegistersAtOnce_aStaleConnectionsReportCountsForNothing() {
        WorkerRegistry stale = new WorkerRegistry(MembershipStore.inMemory(), settings, clock);
        WorkerRecord lost = takingOver(stale);
        stale.rangeDataRefused(lost.workerId(), lost.epoch()); // the old node's dropped link: not the taker
        stale.disconnected(lost.workerId(), lost.epoch() + 1);
        assertThatThrownBy(() -> stale.register("w1", TOKEN, "127.0.0.2:2", CAP, "v", 1)).isInstanceOf(RegistrationRefusedException.class);

        WorkerRegistry r = new WorkerRegistry(MembershipStore.inMemory(), settings, clock);
        WorkerRecord old = takingOver(r);
        r.rangeDataRefused(old.workerId(), old.epoch() + 1); // the taker's takeover refused (a log rotted in the bucket, say)
        r.disconnected(old.workerId(), old.epoch() + 1);
        assertThat(r.register("w1", TOKEN, "127.0.0.2:2", CAP, "v", 1).epoch()).as("the old node, holding the good copy, at once")
                .isEqualTo(old.epoch() + 2);
    }

    /** Old node w1 served at epoch 1 and was lost; a new node of w1 registered with empty range-data (epoch one higher). The old record. */
    private WorkerRecord takingOver(WorkerRegistry r) {
        WorkerRecord old = r.register("w1", TOKEN, "127.0.0.2:1", CAP, "v", 1);
        assertThat(r.archivedAt(old.workerId(), old.epoch(), 1, true)).isTrue();
        r.disconnected(old.workerId(), old.epoch());
        clock.advance(settings.lostAfter());
        assertThat(r.register("w1", TOKEN, "127.0.0.3:1", CAP, "v", 0).epoch()).isEqualTo(old.epoch() + 1);
        return old;
    }
}
