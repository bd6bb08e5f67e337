package org.holdfast.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.holdfast.server.cluster.RegistryFixture.CAP;
import static org.holdfast.server.cluster.RegistryFixture.TOKEN;

import java.nio.file.Path;
import org.holdfast.server.catalog.ClusterStore;
import org.holdfast.server.engine.SteppingClock;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An admin's reset of a worker's takeover fence: only at the confirmed epoch and while no node of the
 * worker is connected, each refusal changing nothing; afterwards the older node registers, the PBN
 * floor stays, and a master restart keeps the reset. A reset cannot be used to serve a stale node
 * beside the newer one: the newer node's next serving report raises the fence again.
 */
class TakeoverFenceResetTest {
    private final SteppingClock clock = RegistryFixture.clock();
    private final MembershipSettings settings = RegistryFixture.SETTINGS;

    @TempDir
    Path dir;

    /** Worker 1 archived at epoch 1 by node w1, then taken over at epoch 2 (the newer node, now gone), 700 PBNs heard handed out. */
    private WorkerRecord takenOver(WorkerRegistry r) {
        WorkerRecord old = r.register("w1", TOKEN, "127.0.0.2:1", CAP, "v", 1);
        r.archivedAt(old.workerId(), old.epoch(), 1, true);
        r.disconnected(old.workerId(), old.epoch());
        clock.advance(settings.lostAfter());
        WorkerRecord taker = r.register("w1", TOKEN, "127.0.0.3:1", CAP, "v", 0);
        r.archivedAt(taker.workerId(), taker.epoch(), 2, true);
        r.handedOut(taker.workerId(), taker.range().first() + 700);
        r.disconnected(taker.workerId(), taker.epoch());
        return taker;
    }

    @Test
    void resetTakeoverFence_confirmedEpochWhileNoNodeConnected_letsTheOlderNodeRegister_keepsTheFloor_andSurvivesARestart() {
        long first;
        try (MetadataDb db = MetadataDb.open(dir)) {
            WorkerRegistry r = new WorkerRegistry(new ClusterStore(db), settings, clock);
            WorkerRecord w = takenOver(r);
            first = w.range().first();
            assertThatThrownBy(() -> r.register("w1", TOKEN, "127.0.0.2:2", CAP, "v", 1)).as("the old node is stale before the reset")
                    .isInstanceOf(RegistrationRefusedException.class).hasMessageContaining("taken over at epoch 2");

            TakeoverFence before = r.resetTakeoverFence(w.workerId(), 2);
            assertThat(before).isEqualTo(new TakeoverFence(2, first + 700));
            assertThat(r.fence(w.workerId())).isEqualTo(new TakeoverFence(0, first + 700));
        }
        try (MetadataDb db = MetadataDb.open(dir)) {
            WorkerRegistry r = new WorkerRegistry(new ClusterStore(db), settings, clock);
            assertThat(r.fence(1)).as("after a master restart").isEqualTo(new TakeoverFence(0, first + 700));
            WorkerRecord back = r.register("w1", TOKEN, "127.0.0.2:3", CAP, "v", 1);
            assertThat(back.workerId()).isEqualTo(1);
            assertThat(r.pbnFloor(1)).as("the PBNs the newer node handed out are never handed out again").isEqualTo(first + 700);
            assertThat(r.archivedAt(1, back.epoch(), 1, true)).isTrue();
            assertThat(r.fence(1).archiveEpoch()).isEqualTo(1);
        }
    }

    @Test
    void resetTakeoverFence_wrongEpochNoFenceOrConnectedNode_isRefusedAndNothingChanges() {
        WorkerRegistry r = new WorkerRegistry(MembershipStore.inMemory(), settings, clock);
        WorkerRecord w = takenOver(r);
        TakeoverFence held = r.fence(w.workerId());

        assertThatThrownBy(() -> r.resetTakeoverFence(w.workerId(), 1)).as("a console that saw an older fence")
                .isInstanceOf(FenceResetRefusedException.class).hasMessageContaining("is at epoch 2, not 1");
        assertThatThrownBy(() -> r.resetTakeoverFence(99, 2)).isInstanceOf(UnknownWorkerException.class);
        WorkerRecord live = r.register("w1", TOKEN, "127.0.0.3:2", CAP, "v", 2);
        assertThatThrownBy(() -> r.resetTakeoverFence(w.workerId(), 2)).isInstanceOf(WorkerConnectedException.class)
                .hasMessageContaining("stop that node");
        assertThat(r.fence(w.workerId())).as("nothing changed by the refusals").isEqualTo(held);

        r.disconnected(live.workerId(), live.epoch());
        r.resetTakeoverFence(w.workerId(), 2);
        assertThatThrownBy(() -> r.resetTakeoverFence(w.workerId(), 0)).as("a second reset finds nothing to drop")
                .isInstanceOf(FenceResetRefusedException.class).hasMessageContaining("has no takeover fence");
    }

    @Test
    void resetTakeoverFence_connectedWorkerWithoutAFence_saysThereIsNothingToReset_notStopTheNode() {
        WorkerRegistry r = new WorkerRegistry(MembershipStore.inMemory(), settings, clock);
        WorkerRecord live = r.register("w1", TOKEN, "127.0.0.2:1", CAP, "v", 0);

        assertThatThrownBy(() -> r.resetTakeoverFence(live.workerId(), 0)).as("an operator must not be told to stop a serving node")
                .isInstanceOf(FenceResetRefusedException.class).hasMessageContaining("has no takeover fence");
        assertThat(r.fence(live.workerId())).isEqualTo(TakeoverFence.NONE);
        r.archivedAt(live.workerId(), live.epoch(), 1, true);
        assertThatThrownBy(() -> r.resetTakeoverFence(live.workerId(), 1)).as("with a fence, a connected node still refuses the reset")
                .isInstanceOf(WorkerConnectedException.class);
        assertThat(r.fence(live.workerId()).archiveEpoch()).isEqualTo(1);
    }

    @Test
    void resetTakeoverFence_newerNodeComesBackAfterAll_raisesItAgain_andTheOlderIsRefusedOnItsLink() {
        WorkerRegistry r = new WorkerRegistry(MembershipStore.inMemory(), settings, clock);
        WorkerRecord w = takenOver(r);
        r.resetTakeoverFence(w.workerId(), 2);
        // the "destroyed" newer node turns out alive and reports serving at epoch 2 again
        WorkerRecord newer = r.register("w1", TOKEN, "127.0.0.3:3", CAP, "v", 2);
        r.archivedAt(newer.workerId(), newer.epoch(), 2, true);
        r.disconnected(newer.workerId(), newer.epoch());
        assertThatThrownBy(() -> r.register("w1", TOKEN, "127.0.0.2:4", CAP, "v", 1)).isInstanceOf(RegistrationRefusedException.class)
                .hasMessageContaining("taken over at epoch 2");
    }
}
