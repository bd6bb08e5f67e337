package org.holdfast.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.holdfast.server.cluster.RegistryFixture.CAP;
import static org.holdfast.server.cluster.RegistryFixture.TOKEN;

import java.nio.file.Path;
import java.time.Duration;
import org.holdfast.server.catalog.ClusterStore;
import org.holdfast.server.engine.SteppingClock;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node that would take an archived range over (empty range-data while the master heard the range
 * archive at epoch 1 or later) waits until the master has not heard the old node for lost-after, and
 * has run for lost-after: otherwise the old node's delete lease may still run while the takeover
 * lists the bucket, and it could delete an object the takeover adopts. The old node back at once is
 * not held.
 */
class TakeoverWaitRegistryTest {
    private final SteppingClock clock = RegistryFixture.clock();
    private final MembershipSettings settings = RegistryFixture.SETTINGS;

    @TempDir
    Path dir;

    /** Worker w1's node registered, reported its store serving at epoch 1, and its link dropped just now. */
    private WorkerRecord archivedThenDropped(WorkerRegistry r) {
        WorkerRecord old = r.register("w1", TOKEN, "127.0.0.2:1", CAP, "v", 1);
        assertThat(r.archivedAt(old.workerId(), old.epoch(), 1, true)).isTrue();
        clock.advance(Duration.ofSeconds(1));
        assertThat(r.heartbeat(old.workerId(), old.epoch(), WorkerLoad.NONE)).isTrue();
        r.disconnected(old.workerId(), old.epoch());
        return old;
    }

    private static void assertWaits(Runnable register, String heard) {
        assertThatThrownBy(register::run).isInstanceOfSatisfying(RegistrationRefusedException.class,
                        e -> assertThat(e.reason()).isEqualTo(RegistrationRefusedException.Reason.TAKEOVER_WAIT))
                .hasMessageContaining(heard)
                .hasMessageContaining("a takeover may start once it has been silent for holdfast.cluster.lost-after (15.0s)")
                .hasMessageContaining("retrying");
    }

    @Test
    void takeover_rightAfterTheOldNodesLinkDrops_waitsLostAfterSinceLastHeard_changingNothing() {
        WorkerRegistry r = new WorkerRegistry(MembershipStore.inMemory(), settings, clock);
        WorkerRecord old = archivedThenDropped(r);
        clock.advance(Duration.ofSeconds(5));

        assertWaits(() -> r.register("w1", TOKEN, "127.0.0.3:1", CAP, "v", 0), "worker 1 (range archived at epoch 1) was heard 5.0s ago");
        assertThat(r.workers()).singleElement().satisfies(v -> {
            assertThat(v.epoch()).as("no registration counted").isEqualTo(old.epoch());
            assertThat(v.address()).isEqualTo("127.0.0.2:1");
        });
        clock.advance(Duration.ofSeconds(10).minusMillis(1));
        assertWaits(() -> r.register("w1", TOKEN, "127.0.0.3:1", CAP, "v", 0), "was heard 15.0s ago");
        clock.advance(Duration.ofMillis(1));
        assertThat(r.register("w1", TOKEN, "127.0.0.3:1", CAP, "v", 0).epoch()).as("lost-after of silence: it takes over")
                .isEqualTo(old.epoch() + 1);
    }

    @Test
    void theOldNodeBackAtOnce_withItsOwnRangeData_isNotHeld() {
        WorkerRegistry r = new WorkerRegistry(MembershipStore.inMemory(), settings, clock);
        WorkerRecord old = archivedThenDropped(r);
        assertThat(r.register("w1", TOKEN, "127.0.0.2:2", CAP, "v", 1).epoch()).isEqualTo(old.epoch() + 1);
        assertThat(r.state(old.workerId())).isEqualTo(MemberState.UP);
    }

    @Test
    void aNodeLostBeforeItsFirstServingReport_stillHoldsATakeoverBack_byTheEpochItsRegisterSaid() {
        WorkerRegistry r = new WorkerRegistry(MembershipStore.inMemory(), settings, clock);
        WorkerRecord old = r.register("w1", TOKEN, "127.0.0.2:1", CAP, "v", 1); // its REGISTERED alone gives it a delete lease
        r.disconnected(old.workerId(), old.epoch());
        assertThat(r.fence(old.workerId()).archiveEpoch()).as("nothing kept").isZero();
        assertWaits(() -> r.register("w1", TOKEN, "127.0.0.3:1", CAP, "v", 0), "was heard 0.0s ago");
        clock.advance(settings.lostAfter());
        assertThat(r.register("w1", TOKEN, "127.0.0.3:1", CAP, "v", 0).epoch()).isEqualTo(old.epoch() + 1);
    }

    @Test
    void aRangeNeverHeardArchived_isNotHeld() {
        WorkerRegistry r = new WorkerRegistry(MembershipStore.inMemory(), settings, clock);
        WorkerRecord old = r.register("w1", TOKEN, "127.0.0.2:1", CAP, "v", 0); // a local store: reports no archive epoch
        r.disconnected(old.workerId(), old.epoch());
        assertThat(r.register("w1", TOKEN, "127.0.0.2:2", CAP, "v", 0).epoch()).isEqualTo(old.epoch() + 1);
    }

    @Test
    void afterAMasterRestart_aTakeoverWaitsLostAfterSinceTheStart_theOldNodeDoesNot() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            archivedThenDropped(new WorkerRegistry(new ClusterStore(db), settings, clock));
        }
        clock.advance(Duration.ofMinutes(10)); // the master was down long; it cannot know when the old node was last up
        try (MetadataDb db = MetadataDb.open(dir)) {
            WorkerRegistry r = new WorkerRegistry(new ClusterStore(db), settings, clock);
            clock.advance(Duration.ofSeconds(3));
            assertWaits(() -> r.register("w1", TOKEN, "127.0.0.3:1", CAP, "v", 0),
                    "archives its range to the bucket (epoch 1); this master started 3.0s ago and has not heard it");
            assertThat(r.state(1)).isEqualTo(MemberState.LOST);
            clock.advance(Duration.ofSeconds(12));
            assertThat(r.register("w1", TOKEN, "127.0.0.3:1", CAP, "v", 0).workerId()).isEqualTo(1);
        }
        try (MetadataDb db = MetadataDb.open(dir)) {
            WorkerRegistry r = new WorkerRegistry(new ClusterStore(db), settings, clock);
            assertThat(r.register("w1", TOKEN, "127.0.0.2:2", CAP, "v", 1).workerId()).as("its own range data: at once").isEqualTo(1);
        }
    }

    @Test
    void afterARestartWithAShorterLostAfter_aTakeoverWaitsTheLongerOneTheWorkersWereTold_untilOutwaited() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            archivedThenDropped(new WorkerRegistry(new ClusterStore(db), settings, clock)); // told 15 s at its REGISTERED
        }
        MembershipSettings shorter = new MembershipSettings(settings.heartbeatInterval(), Duration.ofSeconds(3), Duration.ofSeconds(4),
                settings.firstPbn(), settings.rangeSize(), settings.maxNodesPerToken());
        try (MetadataDb db = MetadataDb.open(dir)) {
            WorkerRegistry r = new WorkerRegistry(new ClusterStore(db), shorter, clock);
            clock.advance(Duration.ofSeconds(5)); // past the new 4 s, within the 15 s the old node may still hold a lease of
            assertThatThrownBy(() -> r.register("w1", TOKEN, "127.0.0.3:1", CAP, "v", 0))
                    .isInstanceOfSatisfying(RegistrationRefusedException.class,
                            e -> assertThat(e.reason()).isEqualTo(RegistrationRefusedException.Reason.TAKEOVER_WAIT))
                    .hasMessageContaining("silent for 15.0s, the holdfast.cluster.lost-after an earlier run of this master told its workers");
        }
        try (MetadataDb db = MetadataDb.open(dir)) { // restarted again before the 15 s were outwaited: still kept
            WorkerRegistry r = new WorkerRegistry(new ClusterStore(db), shorter, clock);
            clock.advance(Duration.ofSeconds(14));
            assertThatThrownBy(() -> r.register("w1", TOKEN, "127.0.0.3:1", CAP, "v", 0)).isInstanceOf(RegistrationRefusedException.class);
            clock.advance(Duration.ofSeconds(1));
            assertThat(r.register("w1", TOKEN, "127.0.0.3:1", CAP, "v", 0).epoch()).as("15 s since the start: it takes over").isEqualTo(2);
            assertThat(new ClusterStore(db).toldLostAfter()).as("outwaited: this run's value is kept").isEqualTo(Duration.ofSeconds(4));
        }
        try (MetadataDb db = MetadataDb.open(dir)) {
            WorkerRegistry r = new WorkerRegistry(new ClusterStore(db), shorter, clock);
            clock.advance(Duration.ofSeconds(4));
            assertThat(r.register("w1", TOKEN, "127.0.0.4:1", CAP, "v", 0).epoch()).as("the next start waits its own 4 s").isEqualTo(3);
        }
    }

    @Test
    void aReplacementNode_waitsLostAfterSinceTheLostHostWasHeard() {
        WorkerRegistry r = new WorkerRegistry(MembershipStore.inMemory(), settings, clock);
        WorkerRecord old = archivedThenDropped(r);
        r.replace(old.workerId(), "w1-new", TOKEN);
        clock.advance(Duration.ofSeconds(2));
        assertWaits(() -> r.register("w1-new", TOKEN, "127.0.0.3:1", CAP, "v", 0), "was heard 2.0s ago");
        clock.advance(Duration.ofSeconds(13));
        assertThat(r.register("w1-new", TOKEN, "127.0.0.3:1", CAP, "v", 0).nodeName()).isEqualTo("w1-new");
    }
}
