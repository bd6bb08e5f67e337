package org.holdfast.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.holdfast.server.cluster.RegistryFixture.CAP;
import static org.holdfast.server.cluster.RegistryFixture.TOKEN;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.holdfast.server.engine.SteppingClock;
import org.junit.jupiter.api.Test;

/**
 * The master's worker states follow its monotonic clock, not its wall clock: a wall clock stepped
 * forward (NTP, an operator) does not make a node that keeps sending heartbeats late or lost, nor lets
 * a second process register its node name; a silent node still goes late and lost on time.
 */
class WallClockJumpTest {
    private final SteppingClock wall = RegistryFixture.clock();
    private final AtomicLong nanos = new AtomicLong(5_000_000_000L);
    private final MembershipSettings settings = RegistryFixture.SETTINGS;

    private void elapse(Duration d) {
        wall.advance(d);
        nanos.addAndGet(d.toNanos());
    }

    @Test
    void state_wallClockJumpsForward_connectedNodeWithFreshHeartbeatsStaysUp() {
        WorkerRegistry r = new WorkerRegistry(MembershipStore.inMemory(), settings, wall, nanos::get);
        WorkerRecord w = r.register("w1", TOKEN, "127.0.0.2:1", CAP, "v", 0);
        long registeredAt = r.workers().get(0).lastHeartbeatMillis();

        wall.advance(Duration.ofHours(1)); // the wall clock steps; no time passed
        assertThat(r.state(w.workerId())).isEqualTo(MemberState.UP);
        assertThat(r.workers().get(0).state()).isEqualTo(MemberState.UP);
        assertThat(r.workers().get(0).lastHeartbeatMillis()).as("wall time still dates the last heartbeat").isEqualTo(registeredAt);
        assertThat(r.workers().get(0).silentNanos()).as("what a lost worker's range copy waits on").isZero();
        assertThatRegisterIsRefused(r);

        elapse(settings.heartbeatInterval());
        assertThat(r.heartbeat(w.workerId(), w.epoch(), WorkerLoad.NONE)).isTrue();
        wall.advance(Duration.ofDays(2));
        assertThat(r.state(w.workerId())).isEqualTo(MemberState.UP);
        assertThat(r.workers().get(0).lastHeartbeatMillis()).isEqualTo(registeredAt + Duration.ofHours(1)
                .plus(settings.heartbeatInterval()).toMillis());
    }

    @Test
    void state_silentNode_goesLateAndLostOnTheMonotonicClock_evenWithTheWallClockStepsBack() {
        WorkerRegistry r = new WorkerRegistry(MembershipStore.inMemory(), settings, wall, nanos::get);
        WorkerRecord w = r.register("w1", TOKEN, "127.0.0.2:1", CAP, "v", 0);
        wall.advance(Duration.ofHours(-1));
        nanos.addAndGet(settings.lateAfter().toNanos() + 1);
        assertThat(r.state(w.workerId())).isEqualTo(MemberState.LATE);
        nanos.addAndGet(settings.lostAfter().minus(settings.lateAfter()).toNanos());
        assertThat(r.state(w.workerId())).isEqualTo(MemberState.LOST);
        assertThat(r.register("w1", TOKEN, "127.0.0.2:2", CAP, "v", 0).epoch()).as("a lost node registers again")
                .isEqualTo(w.epoch() + 1);
    }

    private static void assertThatRegisterIsRefused(WorkerRegistry r) {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> r.register("w1", TOKEN, "127.0.0.9:1", CAP, "v", 0))
                .as("a second process with the node's name, while the node is live")
                .isInstanceOf(RegistrationRefusedException.class).hasMessageContaining("still sending heartbeats");
    }
}
