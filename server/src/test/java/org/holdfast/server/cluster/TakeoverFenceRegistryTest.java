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
 * The master's takeover fence per worker id: a node whose range data archives at a lower epoch than
 * one heard for its worker (a node back after another took the range over) is refused before
 * anything changes, on a restarted master too; the PBN floor a node gets is past every PBN heard
 * handed out under the id, only ever raised, and stays with the id across a replacement.
 */
class TakeoverFenceRegistryTest {
    private final SteppingClock clock = RegistryFixture.clock();
    private final MembershipSettings settings = RegistryFixture.SETTINGS;

    @TempDir
    Path dir;

    @Test
    void register_staleNodeAfterATakeover_isRefusedNamingTheEpochs_andNothingChanges() {
        WorkerRegistry r = new WorkerRegistry(MembershipStore.inMemory(), settings, clock);
        WorkerRecord old = r.register("w1", TOKEN, "127.0.0.2:1", CAP, "v", 1);
        r.disconnected(old.workerId(), old.epoch());
        clock.advance(settings.lostAfter()); // a takeover waits that long (TakeoverWaitRegistryTest)
        // a new host with the same node name took the range over: it registers with an empty range-data, then says epoch 2
        WorkerRecord taker = r.register("w1", TOKEN, "127.0.0.3:1", CAP, "v", 0);
        assertThat(r.archivedAt(taker.workerId(), taker.epoch(), 2, true)).isTrue();
        r.disconnected(taker.workerId(), taker.epoch());

        assertThatThrownBy(() -> r.register("w1", TOKEN, "127.0.0.2:2", CAP, "v", 1)).isInstanceOfSatisfying(
                RegistrationRefusedException.class, e -> assertThat(e.reason()).isEqualTo(RegistrationRefusedException.Reason.TAKEN_OVER))
                .hasMessageContaining("worker 1 was taken over at epoch 2 by another node")
                .hasMessageContaining("archives at epoch 1 and is stale").hasMessageContaining("move its <data-dir>/range-data away");
        assertThat(r.workers()).singleElement().satisfies(v -> {
            assertThat(v.epoch()).as("no registration counted").isEqualTo(taker.epoch());
            assertThat(v.address()).isEqualTo("127.0.0.3:1");
            assertThat(v.state()).isEqualTo(MemberState.LOST);
        });
        // the owner itself, and a node with an empty range-data (a next takeover), still register
        assertThat(r.register("w1", TOKEN, "127.0.0.3:2", CAP, "v", 2).epoch()).isEqualTo(taker.epoch() + 1);
    }

    @Test
    void archivedAt_aLowerEpochOnALiveLink_isRefused() {
        WorkerRegistry r = new WorkerRegistry(MembershipStore.inMemory(), settings, clock);
        WorkerRecord w = r.register("w1", TOKEN, "127.0.0.2:1", CAP, "v", 3);
        assertThat(r.archivedAt(w.workerId(), w.epoch(), 3, true)).isTrue();

        assertThatThrownBy(() -> r.archivedAt(w.workerId(), w.epoch(), 2, true)).isInstanceOf(RegistrationRefusedException.class)
                .hasMessageContaining("taken over at epoch 3");
        assertThatThrownBy(() -> r.archivedAt(w.workerId(), w.epoch(), 2, false)).as("a store that does not serve is refused too")
                .isInstanceOf(RegistrationRefusedException.class);
        assertThat(r.archivedAt(w.workerId(), w.epoch() + 1, 5, true)).as("not this worker's current connection").isFalse();
        assertThat(r.fence(w.workerId()).archiveEpoch()).isEqualTo(3);
    }

    @Test
    void pbnFloor_pastEveryPbnHeardHandedOut_onlyRaised_keptAcrossAReplacementAndAMasterRestart() {
        long first;
        try (MetadataDb db = MetadataDb.open(dir)) {
            WorkerRegistry r = new WorkerRegistry(new ClusterStore(db), settings, clock);
            WorkerRecord w = r.register("w1", TOKEN, "127.0.0.2:1", CAP, "v", 1);
            r.archivedAt(w.workerId(), w.epoch(), 1, true);
            first = w.range().first();
            assertThat(r.pbnFloor(w.workerId())).as("nothing heard: the range's first").isEqualTo(first);
            r.handedOut(w.workerId(), first + 500);
            r.handedOut(w.workerId(), first + 100); // an older heartbeat's figure never lowers it
            r.disconnected(w.workerId(), w.epoch());
            r.replace(w.workerId(), "w1-new", TOKEN);
            assertThat(r.pbnFloor(w.workerId())).isEqualTo(first + 500);
            r.handedOut(w.workerId(), Long.MAX_VALUE); // a figure past the range: the floor is the range's limit, never beyond
            assertThat(r.pbnFloor(w.workerId())).isEqualTo(w.range().limit());
        }
        try (MetadataDb db = MetadataDb.open(dir)) {
            WorkerRegistry r = new WorkerRegistry(new ClusterStore(db), settings, clock);
            clock.advance(settings.lostAfter()); // a takeover waits lost-after from the master's start (TakeoverWaitRegistryTest)
            assertThat(r.pbnFloor(1)).as("after a master restart").isEqualTo(first + settings.rangeSize());
            assertThat(r.fence(1).archiveEpoch()).isEqualTo(1);
            assertThat(r.register("w1-new", TOKEN, "127.0.0.3:1", CAP, "v", 0).workerId()).as("an empty range-data is not stale")
                    .isEqualTo(1);
        }
    }

    @Test
    void register_epochReadFromAnotherWorkersDirectory_neverRaisesTheFence_theWorkersOwnNodeStillRegisters() {
        WorkerRegistry r = new WorkerRegistry(MembershipStore.inMemory(), settings, clock);
        // a node whose range-data belongs to another worker id (removed and registered again as a new id, or a copied
        // directory) says that directory's epoch 5; its store refuses (another worker's), so its reports do not serve
        WorkerRecord w = r.register("w1", TOKEN, "127.0.0.2:1", CAP, "v", 5);
        assertThat(r.archivedAt(w.workerId(), w.epoch(), 5, false)).isTrue();
        assertThat(r.fence(w.workerId()).archiveEpoch()).as("nothing an open store of this worker said").isZero();
        r.disconnected(w.workerId(), w.epoch());
        clock.advance(settings.lostAfter()); // the epoch said at REGISTER holds a takeover back that long (TakeoverWaitRegistryTest)

        // the operator moves that directory away as the refusal says: the node starts its worker's range at epoch 1
        WorkerRecord again = r.register("w1", TOKEN, "127.0.0.2:2", CAP, "v", 0);
        assertThat(r.archivedAt(again.workerId(), again.epoch(), 1, true)).isTrue();
        r.disconnected(again.workerId(), again.epoch());
        assertThat(r.register("w1", TOKEN, "127.0.0.2:3", CAP, "v", 1).workerId()).as("and registers again after a restart")
                .isEqualTo(w.workerId());
        assertThat(r.fence(w.workerId()).archiveEpoch()).isEqualTo(1);
    }
}
