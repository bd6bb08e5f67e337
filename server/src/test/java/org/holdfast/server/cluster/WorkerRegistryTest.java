package org.holdfast.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.holdfast.server.cluster.RegistryFixture.CAP;
import static org.holdfast.server.cluster.RegistryFixture.TOKEN;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.holdfast.common.id.PbnRange;
import org.holdfast.server.catalog.ClusterStore;
import org.holdfast.server.engine.SteppingClock;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class WorkerRegistryTest {
    private static final String OTHER_TOKEN = "fedcba9876543210";
    private final SteppingClock clock = RegistryFixture.clock();
    private final MembershipStore store = MembershipStore.inMemory();
    private final MembershipSettings settings = RegistryFixture.SETTINGS;

    private WorkerRegistry registry() {
        return new WorkerRegistry(store, settings, clock);
    }

    @Test
    void register_newNodes_getConsecutiveIdsAndDisjointRangesAboveTheFirstPbn() {
        WorkerRegistry r = registry();
        WorkerRecord a = r.register("w1", TOKEN, "127.0.0.2:40000", CAP, "v");
        WorkerRecord b = r.register("w2", TOKEN, "127.0.0.3:40000", CAP, "v");
        WorkerRecord c = r.register("w3", TOKEN, "127.0.0.4:40000", CAP, "v");
        assertThat(List.of(a.workerId(), b.workerId(), c.workerId())).containsExactly(1L, 2L, 3L);
        assertThat(List.of(a.epoch(), b.epoch(), c.epoch())).containsOnly(1L);
        assertThat(a.range()).isEqualTo(new PbnRange(1L << 48, (1L << 48) + (1L << 20)));
        assertThat(a.range().overlaps(b.range())).isFalse();
        assertThat(b.range().overlaps(c.range())).isFalse();
        assertThat(b.range().first()).isEqualTo(a.range().limit());
        assertThat(store.workers()).hasSize(3);
    }

    @Test
    void register_manyNodesInRandomOrderWithRestarts_rangesStayPairwiseDisjointAndIdsStable() {
        Random rnd = new Random(18);
        WorkerRegistry r = registry();
        java.util.Map<String, WorkerRecord> first = new java.util.HashMap<>();
        for (int step = 0; step < 300; step++) {
            String node = "n" + rnd.nextInt(40);
            WorkerRecord got;
            try {
                got = r.register(node, "t-" + node, "127.0.0.1:1", CAP, "v");
            } catch (RegistrationRefusedException e) {
                assertThat(e.reason()).isEqualTo(RegistrationRefusedException.Reason.NODE_CONFLICT);
                got = null;
            }
            if (got != null) {
                WorkerRecord before = first.putIfAbsent(node, got);
                if (before != null) {
                    assertThat(got.workerId()).isEqualTo(before.workerId());
                    assertThat(got.range()).isEqualTo(before.range());
                }
                if (rnd.nextBoolean()) {
                    r.disconnected(got.workerId(), got.epoch());
                }
            }
            if (rnd.nextInt(20) == 0) {
                r = registry(); // a master restart: everything reloaded from the store, nobody connected
            }
        }
        List<WorkerView> all = r.workers();
        for (int i = 0; i < all.size(); i++) {
            for (int j = i + 1; j < all.size(); j++) {
                assertThat(all.get(i).range().overlaps(all.get(j).range())).as("%s vs %s", all.get(i), all.get(j)).isFalse();
            }
        }
        assertThat(all).extracting(WorkerView::nodeName).doesNotHaveDuplicates();
    }

    @Test
    void register_sameNodeAfterDisconnect_getsSameIdAndRangeWithEpochPlusOne() {
        WorkerRegistry r = registry();
        WorkerRecord a = r.register("w1", TOKEN, "127.0.0.2:40000", CAP, "v");
        r.disconnected(a.workerId(), a.epoch());
        assertThat(r.state(a.workerId())).isEqualTo(MemberState.LOST);
        WorkerRecord again = r.register("w1", TOKEN, "127.0.0.2:40001", CAP, "v");
        assertThat(again.workerId()).isEqualTo(a.workerId());
        assertThat(again.range()).isEqualTo(a.range());
        assertThat(again.epoch()).isEqualTo(a.epoch() + 1);
        assertThat(r.state(a.workerId())).isEqualTo(MemberState.UP);
    }

    @Test
    void register_afterMasterRestart_assignmentsComeBackFromTheStore() {
        WorkerRecord a = registry().register("w1", TOKEN, "x", CAP, "v");
        WorkerRecord b = registry().register("w2", TOKEN, "y", CAP, "v"); // a second registry: w1 must not be given out again
        WorkerRegistry restarted = registry();
        assertThat(restarted.workers()).extracting(WorkerView::state).containsOnly(MemberState.LOST);
        WorkerRecord a2 = restarted.register("w1", TOKEN, "x", CAP, "v");
        assertThat(b.workerId()).isEqualTo(2);
        assertThat(a2.workerId()).isEqualTo(a.workerId());
        assertThat(a2.range()).isEqualTo(a.range());
        assertThat(a2.epoch()).isEqualTo(2);
        assertThat(restarted.register("w3", TOKEN, "z", CAP, "v").workerId()).isEqualTo(3);
    }

    @Test
    void register_nodeConnectedAndHeard_isRefusedAndNothingChanges() {
        WorkerRegistry r = registry();
        WorkerRecord a = r.register("w1", TOKEN, "127.0.0.2:1", CAP, "v");
        clock.advance(Duration.ofSeconds(10)); // late, still not lost
        assertThatThrownBy(() -> r.register("w1", TOKEN, "127.0.0.9:2", CAP, "v"))
                .isInstanceOf(RegistrationRefusedException.class)
                .hasMessageContaining("registered already")
                .extracting(e -> ((RegistrationRefusedException) e).reason()).isEqualTo(RegistrationRefusedException.Reason.NODE_CONFLICT);
        assertThat(store.workers()).containsExactly(a);
        assertThat(r.workers()).singleElement().satisfies(w -> {
            assertThat(w.address()).isEqualTo("127.0.0.2:1");
            assertThat(w.epoch()).isEqualTo(1);
        });
    }

    @Test
    void register_nodeSilentPastLostAfter_isTakenOverAndTheOldConnectionIsStale() {
        WorkerRegistry r = registry();
        WorkerRecord a = r.register("w1", TOKEN, "127.0.0.2:1", CAP, "v");
        clock.advance(Duration.ofSeconds(16));
        WorkerRecord b = r.register("w1", TOKEN, "127.0.0.2:2", CAP, "v");
        assertThat(b.epoch()).isEqualTo(2);
        assertThat(r.heartbeat(a.workerId(), a.epoch(), WorkerLoad.NONE)).isFalse();
        r.disconnected(a.workerId(), a.epoch()); // the old connection closing must not mark the new one lost
        assertThat(r.state(a.workerId())).isEqualTo(MemberState.UP);
    }

    @Test
    void state_withoutHeartbeats_goesUpLateLostAndBackUpOnHeartbeat() {
        WorkerRegistry r = registry();
        WorkerRecord a = r.register("w1", TOKEN, "x", CAP, "v");
        assertThat(r.state(1)).isEqualTo(MemberState.UP);
        clock.advance(Duration.ofSeconds(6));
        assertThat(r.state(1)).isEqualTo(MemberState.UP); // the threshold itself is still on time
        clock.advance(Duration.ofMillis(1));
        assertThat(r.state(1)).isEqualTo(MemberState.LATE);
        WorkerLoad load = new WorkerLoad(1500, 10, 20, 30);
        assertThat(r.heartbeat(a.workerId(), a.epoch(), load)).isTrue();
        assertThat(r.state(1)).isEqualTo(MemberState.UP);
        assertThat(r.workers().get(0).load()).isEqualTo(load);
        assertThat(r.workers().get(0).lastHeartbeatMillis()).isEqualTo(clock.millis());
        clock.advance(Duration.ofSeconds(15).plusMillis(1));
        assertThat(r.state(1)).isEqualTo(MemberState.LOST);
    }

    @Test
    void heartbeat_wrongEpochOrUnknownWorker_isRefusedAndNotNoted() {
        WorkerRegistry r = registry();
        WorkerRecord a = r.register("w1", TOKEN, "x", CAP, "v");
        clock.advance(Duration.ofSeconds(7));
        assertThat(r.heartbeat(a.workerId(), a.epoch() + 1, WorkerLoad.NONE)).isFalse();
        assertThat(r.heartbeat(99, 1, WorkerLoad.NONE)).isFalse();
        assertThat(r.state(a.workerId())).isEqualTo(MemberState.LATE);
        assertThat(r.state(99)).isNull();
    }

    @Test
    void register_malformedNodeName_isRefusedAndNothingStored() {
        WorkerRegistry r = registry();
        for (String bad : new String[] {"", "a/b", "-lead", "x".repeat(65), "sp ace", "é"}) {
            assertThatThrownBy(() -> r.register(bad, TOKEN, "x", CAP, "v")).isInstanceOf(RegistrationRefusedException.class)
                    .hasMessageContaining("holdfast.store.s3.node");
        }
        assertThat(store.workers()).isEmpty();
        assertThat(r.workers()).isEmpty();
    }

    @Test
    void register_rangeSpaceExhausted_isRefused() {
        WorkerRegistry r = new WorkerRegistry(store, new MembershipSettings(Duration.ofSeconds(1), Duration.ofSeconds(2),
                Duration.ofSeconds(3), Long.MAX_VALUE - 10, 8), clock);
        r.register("w1", TOKEN, "x", CAP, "v");
        assertThatThrownBy(() -> r.register("w2", TOKEN, "x", CAP, "v")).isInstanceOf(RegistrationRefusedException.class)
                .extracting(e -> ((RegistrationRefusedException) e).reason()).isEqualTo(RegistrationRefusedException.Reason.NO_RANGE_LEFT);
        assertThat(store.workers()).hasSize(1);
    }

    @Test
    void register_afterTheRangeSizeWasLowered_refusesARangeOverlappingAStoredOneAndTheMasterStillStarts() {
        WorkerRegistry before = registry(); // ranges of 2^20
        before.register("w1", TOKEN, "x", CAP, "v");
        WorkerRecord w2 = before.register("w2", TOKEN, "x", CAP, "v");
        // an operator lowers holdfast.cluster.pbn-range-size; the docs say a new size applies only to new workers
        MembershipSettings halved = new MembershipSettings(settings.heartbeatInterval(), settings.lateAfter(), settings.lostAfter(),
                settings.firstPbn(), settings.rangeSize() / 2);
        WorkerRegistry after = new WorkerRegistry(store, halved, clock);
        assertThatThrownBy(() -> after.register("w3", TOKEN, "x", CAP, "v")).isInstanceOf(RegistrationRefusedException.class)
                .hasMessageContaining("overlaps").hasMessageContaining("holdfast.cluster.pbn-range-size");
        assertThat(store.workers()).as("nothing stored").hasSize(2);
        assertThat(after.workers()).extracting(WorkerView::range).contains(w2.range()).hasSize(2);
        assertThat(new WorkerRegistry(store, halved, clock).workers()).as("the master still starts").hasSize(2);
    }

    @Test
    void constructor_overlappingStoredRanges_refusesToStart() {
        store.put(new WorkerRecord(1, "a", 1, new PbnRange(100, 200), 0, 0));
        store.put(new WorkerRecord(2, "b", 1, new PbnRange(150, 250), 0, 0));
        assertThatThrownBy(this::registry).isInstanceOf(IllegalStateException.class).hasMessageContaining("conflict");
    }

    @Test
    void settings_thresholdsOutOfOrder_areRefused() {
        assertThatThrownBy(() -> new MembershipSettings(Duration.ofSeconds(5), Duration.ofSeconds(5), Duration.ofSeconds(15), 1, 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("heartbeat-interval < late-after < lost-after");
    }

    @Test
    void settings_lostAfterOverADay_isRefused_aDayIsNot() {
        // REGISTERED tells workers the value and they refuse more than a day: the master must not start with it
        assertThatThrownBy(() -> new MembershipSettings(Duration.ofSeconds(2), Duration.ofSeconds(6), Duration.ofDays(1).plusMillis(1), 1, 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("holdfast.cluster.lost-after must be at most 1 day");
        assertThat(new MembershipSettings(Duration.ofSeconds(2), Duration.ofSeconds(6), Duration.ofDays(1), 1, 1).lostAfter())
                .isEqualTo(Duration.ofDays(1));
    }

    @Test
    void remove_disconnectedWorker_deletesItsRecordAndItsNodeComesBackAsANewWorkerEvenAfterARestart() {
        WorkerRegistry r = registry();
        WorkerRecord a = r.register("w1", TOKEN, "127.0.0.2:1", CAP, "v");
        WorkerRecord b = r.register("w2", TOKEN, "127.0.0.3:1", CAP, "v");
        r.disconnected(b.workerId(), b.epoch());
        assertThat(r.remove(b.workerId())).isEqualTo(b);
        assertThat(r.workers()).extracting(WorkerView::workerId).containsExactly(a.workerId());
        assertThat(store.workers()).extracting(WorkerRecord::workerId).containsExactly(a.workerId());
        assertThat(r.state(b.workerId())).isNull();
        r = registry(); // a master restart must not hand the removed (highest) id and its range out again
        WorkerRecord again = r.register("w2", TOKEN, "127.0.0.3:1", CAP, "v");
        assertThat(again.workerId()).isEqualTo(3L);
        assertThat(again.epoch()).as("new, so the worker wipes its old index").isEqualTo(1L);
        assertThat(again.range().overlaps(b.range())).isFalse();
        assertThat(again.range().overlaps(a.range())).isFalse();
    }

    @Test
    void remove_connectedOrUnknownWorker_isRefusedAndNothingChanges() {
        WorkerRegistry r = registry();
        WorkerRecord a = r.register("w1", TOKEN, "127.0.0.2:1", CAP, "v");
        assertThatThrownBy(() -> r.remove(a.workerId())).isInstanceOf(WorkerConnectedException.class)
                .hasMessageContaining("stop the worker first");
        assertThatThrownBy(() -> r.remove(99)).isInstanceOf(UnknownWorkerException.class).hasMessageContaining("99");
        assertThat(store.workers()).containsExactly(a);
        assertThat(store.highestRemovedId()).isZero();
        assertThat(r.state(a.workerId())).isEqualTo(MemberState.UP);
    }

    private static RegistrationRefusedException.Reason reasonOf(Throwable e) {
        return ((RegistrationRefusedException) e).reason();
    }

    @Test
    void register_lostNodeWithAnotherToken_isRefusedTokenMismatchAndNothingChanges() {
        WorkerRegistry r = registry();
        WorkerRecord a = r.register("w1", TOKEN, "127.0.0.2:1", CAP, "v");
        r.disconnected(a.workerId(), a.epoch());
        assertThatThrownBy(() -> r.register("w1", OTHER_TOKEN, "127.0.0.66:1", CAP, "v"))
                .hasMessage("node w1 is bound to another worker token; use the token it first registered with, or remove the worker"
                        + " (DELETE /api/v1/cluster/workers/1) to re-register it, or have an admin bind it to this token"
                        + " (PUT /api/v1/cluster/workers/1/token)")
                .extracting(WorkerRegistryTest::reasonOf).isEqualTo(RegistrationRefusedException.Reason.TOKEN_MISMATCH);
        assertThat(store.workers()).as("record, epoch and range unchanged").containsExactly(a);
        assertThat(r.workers()).singleElement().satisfies(w -> {
            assertThat(w.state()).isEqualTo(MemberState.LOST);
            assertThat(w.epoch()).isEqualTo(1);
            assertThat(w.range()).isEqualTo(a.range());
            assertThat(w.address()).isEqualTo("127.0.0.2:1");
            assertThat(w.tokenId()).isEqualTo(TOKEN);
        });
    }

    @Test
    void register_liveNodeWithAnotherToken_isRefusedTokenMismatchWithoutNamingItsAddress() {
        WorkerRegistry r = registry();
        r.register("w1", TOKEN, "127.0.0.2:1", CAP, "v");
        assertThatThrownBy(() -> r.register("w1", OTHER_TOKEN, "127.0.0.66:1", CAP, "v"))
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("127.0.0.2"))
                .extracting(WorkerRegistryTest::reasonOf).isEqualTo(RegistrationRefusedException.Reason.TOKEN_MISMATCH);
        assertThat(r.workers()).singleElement().extracting(WorkerView::epoch).isEqualTo(1L);
    }

    @Test
    void register_sameTokenAgain_isAcceptedWithEpochPlusOneAndStaysBound() {
        WorkerRegistry r = registry();
        WorkerRecord a = r.register("w1", TOKEN, "127.0.0.2:1", CAP, "v");
        r.disconnected(a.workerId(), a.epoch());
        WorkerRecord again = registry().register("w1", TOKEN, "127.0.0.2:2", CAP, "v"); // after a master restart too
        assertThat(again.epoch()).isEqualTo(2);
        assertThat(again.range()).isEqualTo(a.range());
        assertThat(again.tokenId()).isEqualTo(TOKEN);
        assertThat(store.workers()).containsExactly(again);
    }

    @Test
    void register_tokenAtItsNodeLimit_isRefusedTooManyNodesWhileItsOwnNodesAndOtherTokensStillRegister() {
        WorkerRegistry r = new WorkerRegistry(store, new MembershipSettings(settings.heartbeatInterval(), settings.lateAfter(),
                settings.lostAfter(), settings.firstPbn(), settings.rangeSize(), 2), clock);
        WorkerRecord a = r.register("w1", TOKEN, "x", CAP, "v");
        r.register("w2", TOKEN, "x", CAP, "v");
        assertThatThrownBy(() -> r.register("w3", TOKEN, "x", CAP, "v"))
                .hasMessageContaining("holdfast.cluster.max-nodes-per-token").hasMessageContaining("a token of its own")
                .extracting(WorkerRegistryTest::reasonOf).isEqualTo(RegistrationRefusedException.Reason.TOO_MANY_NODES);
        assertThat(store.workers()).as("nothing stored").hasSize(2);
        assertThat(r.register("w3", OTHER_TOKEN, "x", CAP, "v").workerId()).as("the id w3 did not get is still free").isEqualTo(3);
        r.disconnected(a.workerId(), a.epoch());
        assertThat(r.register("w1", TOKEN, "x", CAP, "v").epoch()).as("a node it holds already").isEqualTo(2);
    }

    @Test
    void register_afterRemovingOneOfItsWorkers_theTokenMayRegisterANewNode() {
        WorkerRegistry r = new WorkerRegistry(store, new MembershipSettings(settings.heartbeatInterval(), settings.lateAfter(),
                settings.lostAfter(), settings.firstPbn(), settings.rangeSize(), 1), clock);
        WorkerRecord a = r.register("w1", TOKEN, "x", CAP, "v");
        assertThatThrownBy(() -> r.register("w2", TOKEN, "x", CAP, "v")).isInstanceOf(RegistrationRefusedException.class);
        r.disconnected(a.workerId(), a.epoch());
        r.remove(a.workerId());
        assertThat(r.register("w2", TOKEN, "x", CAP, "v").workerId()).isEqualTo(2);
    }

    @Test
    void register_removedThenANewToken_isANewWorkerBoundToTheNewToken() {
        WorkerRegistry r = registry();
        WorkerRecord a = r.register("w1", TOKEN, "x", CAP, "v");
        r.disconnected(a.workerId(), a.epoch());
        r.remove(a.workerId());
        WorkerRecord b = registry().register("w1", OTHER_TOKEN, "x", CAP, "v");
        assertThat(b.workerId()).isEqualTo(2);
        assertThat(b.epoch()).isEqualTo(1);
        assertThat(b.tokenId()).isEqualTo(OTHER_TOKEN);
        assertThat(b.range().overlaps(a.range())).isFalse();
    }

    @Test
    void register_unboundRecordFromAnOlderMaster_bindsToTheFirstTokenAndRefusesOthersAfter() {
        WorkerRecord old = new WorkerRecord(1, "w1", 4, new PbnRange(settings.firstPbn(), settings.firstPbn() + settings.rangeSize()),
                10, 20);
        store.put(old);
        WorkerRegistry r = registry();
        assertThat(r.workers()).singleElement().extracting(WorkerView::tokenId).isEqualTo("");
        WorkerRecord bound = r.register("w1", TOKEN, "x", CAP, "v");
        assertThat(bound.epoch()).isEqualTo(5);
        assertThat(bound.tokenId()).isEqualTo(TOKEN);
        assertThat(store.workers()).containsExactly(bound);
        r.disconnected(bound.workerId(), bound.epoch());
        assertThatThrownBy(() -> registry().register("w1", OTHER_TOKEN, "x", CAP, "v"))
                .extracting(WorkerRegistryTest::reasonOf).isEqualTo(RegistrationRefusedException.Reason.TOKEN_MISMATCH);
    }

    @Test
    void register_unboundRecordByATokenAtItsLimit_isRefusedAndStaysUnbound() {
        store.put(new WorkerRecord(1, "old", 1, new PbnRange(settings.firstPbn(), settings.firstPbn() + settings.rangeSize()), 1, 1));
        WorkerRegistry r = new WorkerRegistry(store, new MembershipSettings(settings.heartbeatInterval(), settings.lateAfter(),
                settings.lostAfter(), settings.firstPbn(), settings.rangeSize(), 1), clock);
        r.register("w1", TOKEN, "x", CAP, "v");
        assertThatThrownBy(() -> r.register("old", TOKEN, "x", CAP, "v"))
                .extracting(WorkerRegistryTest::reasonOf).isEqualTo(RegistrationRefusedException.Reason.TOO_MANY_NODES);
        assertThat(store.workers()).filteredOn(w -> w.nodeName().equals("old")).singleElement()
                .satisfies(w -> assertThat(w.bound()).isFalse());
    }

    @Test
    void settings_maxNodesPerTokenZeroOrNegative_isRefusedNamingTheSetting() {
        for (int bad : new int[] {0, -1}) {
            assertThatThrownBy(() -> new MembershipSettings(settings.heartbeatInterval(), settings.lateAfter(), settings.lostAfter(),
                    settings.firstPbn(), settings.rangeSize(), bad))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("holdfast.cluster.max-nodes-per-token");
        }
        assertThat(MembershipSettings.defaults().maxNodesPerToken()).isEqualTo(16);
    }

    @Test
    void rebind_toATokenAtItsLimitOrOfAnUnknownWorker_isRefusedAndNothingChanges() {
        WorkerRegistry r = new WorkerRegistry(store, new MembershipSettings(settings.heartbeatInterval(), settings.lateAfter(),
                settings.lostAfter(), settings.firstPbn(), settings.rangeSize(), 1), clock);
        WorkerRecord a = r.register("w1", TOKEN, "x", CAP, "v");
        WorkerRecord b = r.register("w2", OTHER_TOKEN, "x", CAP, "v");
        assertThatThrownBy(() -> r.rebind(b.workerId(), TOKEN))
                .extracting(WorkerRegistryTest::reasonOf).isEqualTo(RegistrationRefusedException.Reason.TOO_MANY_NODES);
        assertThatThrownBy(() -> r.rebind(99, TOKEN)).isInstanceOf(UnknownWorkerException.class);
        assertThat(store.workers()).containsExactlyInAnyOrder(a, b);
        assertThat(r.rebind(a.workerId(), TOKEN)).as("to the token it holds: nothing to do").isEqualTo(a);
    }

    @Test
    void rebind_keepsIdRangeAndEpochAndTheNextRegistrationNeedsTheNewToken() {
        WorkerRegistry r = registry();
        WorkerRecord a = r.register("w1", TOKEN, "x", CAP, "v");
        WorkerRecord moved = r.rebind(a.workerId(), OTHER_TOKEN);
        assertThat(moved).isEqualTo(new WorkerRecord(a.workerId(), "w1", 1, a.range(), a.firstRegisteredMillis(),
                a.lastRegisteredMillis(), OTHER_TOKEN));
        assertThat(store.workers()).containsExactly(moved);
        assertThat(r.boundTo(a.workerId(), TOKEN)).as("the old token's connection ends at its next heartbeat").isFalse();
        assertThat(r.boundTo(a.workerId(), OTHER_TOKEN)).isTrue();
        r.disconnected(a.workerId(), a.epoch());
        assertThatThrownBy(() -> registry().register("w1", TOKEN, "x", CAP, "v"))
                .extracting(WorkerRegistryTest::reasonOf).isEqualTo(RegistrationRefusedException.Reason.TOKEN_MISMATCH);
        assertThat(registry().register("w1", OTHER_TOKEN, "x", CAP, "v").epoch()).isEqualTo(2);
    }

    @Test
    void register_sameNewNodeByTwoTokensAtOnce_exactlyOneBindsItAndTheOtherIsRefusedTokenMismatch() throws Exception {
        for (int round = 0; round < 50; round++) {
            WorkerRegistry r = new WorkerRegistry(MembershipStore.inMemory(), settings, clock);
            java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(2);
            List<Object> got = new java.util.concurrent.CopyOnWriteArrayList<>();
            List<Thread> threads = new java.util.ArrayList<>();
            for (String token : new String[] {TOKEN, OTHER_TOKEN}) {
                threads.add(new Thread(() -> {
                    try {
                        start.await();
                        got.add(r.register("w1", token, "x", CAP, "v"));
                    } catch (RegistrationRefusedException e) {
                        got.add(e.reason());
                    } catch (Exception e) {
                        got.add(e);
                    }
                }));
            }
            threads.forEach(Thread::start);
            for (Thread t : threads) {
                t.join();
            }
            assertThat(got).hasSize(2).containsOnlyOnce(RegistrationRefusedException.Reason.TOKEN_MISMATCH);
            WorkerRecord won = (WorkerRecord) got.stream().filter(WorkerRecord.class::isInstance).findFirst().orElseThrow();
            assertThat(r.workers()).singleElement().satisfies(w -> assertThat(w.tokenId()).isEqualTo(won.tokenId()));
        }
    }

    @Test
    void register_caseVariantOfABoundNodeName_isANewWorkerAndTheBoundNodeStaysUntouched() {
        WorkerRegistry r = registry();
        WorkerRecord a = r.register("w1", TOKEN, "x", CAP, "v");
        r.disconnected(a.workerId(), a.epoch());
        WorkerRecord b = r.register("W1", OTHER_TOKEN, "x", CAP, "v");
        assertThat(b.workerId()).isNotEqualTo(a.workerId());
        assertThat(b.range().overlaps(a.range())).isFalse();
        assertThat(store.workers()).contains(a);
        assertThatThrownBy(() -> r.register("w1\u0131", OTHER_TOKEN, "x", CAP, "v")) // no Unicode look-alikes: ASCII names only
                .extracting(WorkerRegistryTest::reasonOf).isEqualTo(RegistrationRefusedException.Reason.INVALID_NODE_NAME);
    }

    @Test
    void registerAndRebind_catalogWriteFails_nothingChangesInMemoryEither() {
        MembershipStore failing = new MembershipStore() {
            boolean fail;

            @Override
            public List<WorkerRecord> workers() {
                return store.workers();
            }

            @Override
            public void put(WorkerRecord record) {
                if (fail) {
                    throw new IllegalStateException("disk full");
                }
                store.put(record);
                fail = true; // the first write lands, every later one fails
            }

            @Override
            public void remove(long workerId) {
                store.remove(workerId);
            }

            @Override
            public long highestRemovedId() {
                return store.highestRemovedId();
            }
        };
        WorkerRegistry r = new WorkerRegistry(failing, settings, clock);
        WorkerRecord a = r.register("w1", TOKEN, "x", CAP, "v");
        assertThatThrownBy(() -> r.rebind(a.workerId(), OTHER_TOKEN)).hasMessage("disk full");
        assertThat(r.boundTo(a.workerId(), TOKEN)).as("still bound to its token").isTrue();
        r.disconnected(a.workerId(), a.epoch());
        assertThatThrownBy(() -> r.register("w1", TOKEN, "x", CAP, "v")).hasMessage("disk full");
        assertThatThrownBy(() -> r.register("w2", TOKEN, "x", CAP, "v")).hasMessage("disk full");
        assertThat(r.workers()).singleElement().satisfies(w -> {
            assertThat(w.epoch()).isEqualTo(1);
            assertThat(w.state()).isEqualTo(MemberState.LOST);
            assertThat(w.tokenId()).isEqualTo(TOKEN);
        });
        assertThat(store.workers()).containsExactly(a);
        assertThatThrownBy(() -> r.register("w1", OTHER_TOKEN, "x", CAP, "v")).as("the failed rebind did not move the binding")
                .extracting(WorkerRegistryTest::reasonOf).isEqualTo(RegistrationRefusedException.Reason.TOKEN_MISMATCH);
    }

    // replacing a lost worker: on the real catalog (RocksDB on disk), as the master keeps it

    @TempDir
    Path catalog;

    /** Runs {@code steps} against a registry on the catalog in {@link #catalog}: one master start. */
    private void onCatalog(java.util.function.BiConsumer<WorkerRegistry, ClusterStore> steps) {
        try (MetadataDb db = MetadataDb.open(catalog)) {
            ClusterStore s = new ClusterStore(db);
            steps.accept(new WorkerRegistry(s, settings, clock), s);
        }
    }

    /** Registers node {@code node} with {@code token} and drops its connection: a lost worker. */
    private static WorkerRecord lost(WorkerRegistry r, String node, String token) {
        WorkerRecord w = r.register(node, token, "127.0.0.2:1", CAP, "v");
        r.disconnected(w.workerId(), w.epoch());
        return w;
    }

    @Test
    void replace_lostWorker_keepsIdRangeAndEpochNamesTheNewNodeUnboundAndIsStoredBeforeItReturns() {
        onCatalog((r, s) -> {
            WorkerRecord a = lost(r, "w1", TOKEN);
            WorkerRecord other = r.register("w2", TOKEN, "127.0.0.3:1", CAP, "v");
            WorkerRecord got = r.replace(a.workerId(), "w9");
            assertThat(got).isEqualTo(new WorkerRecord(a.workerId(), "w9", a.epoch(), a.range(), a.firstRegisteredMillis(),
                    a.lastRegisteredMillis(), ""));
            assertThat(s.workers()).as("on disk").containsExactlyInAnyOrder(got, other);
            assertThat(r.workers()).filteredOn(w -> w.workerId() == a.workerId()).singleElement().satisfies(w -> {
                assertThat(w.nodeName()).isEqualTo("w9");
                assertThat(w.state()).isEqualTo(MemberState.LOST);
                assertThat(w.address()).as("the lost host's address is not the new one's").isEmpty();
                assertThat(w.lastHeartbeatMillis()).as("the new node was never heard").isZero();
                assertThat(w.tokenId()).isEmpty();
            });
        });
    }

    @Test
    void replace_connectedWorkerUpLateOrSilentPastLostAfter_isRefusedAndNothingChanges() {
        onCatalog((r, s) -> {
            WorkerRecord a = r.register("w1", TOKEN, "127.0.0.2:1", CAP, "v");
            for (Duration wait : List.of(Duration.ZERO, Duration.ofSeconds(10), Duration.ofSeconds(10))) {
                clock.advance(wait); // up, late, then silent past lost-after with its connection still open
                assertThatThrownBy(() -> r.replace(a.workerId(), "w9")).isInstanceOf(WorkerConnectedException.class)
                        .hasMessageContaining("only a lost worker is replaced");
            }
            assertThat(s.workers()).containsExactly(a);
            assertThat(r.heartbeat(a.workerId(), a.epoch(), WorkerLoad.NONE)).as("its connection goes on").isTrue();
        });
    }

    @Test
    void replace_unknownWorker_isRefused() {
        onCatalog((r, s) -> {
            WorkerRecord a = lost(r, "w1", TOKEN);
            assertThatThrownBy(() -> r.replace(99, "w9")).isInstanceOf(UnknownWorkerException.class).hasMessageContaining("99");
            assertThat(s.workers()).containsExactly(a);
        });
    }

    @Test
    void replace_nameOfAnotherWorkerItsOwnOrMalformed_isRefusedAndNothingChanges() {
        onCatalog((r, s) -> {
            WorkerRecord a = lost(r, "w1", TOKEN);
            WorkerRecord b = lost(r, "w2", TOKEN);
            assertThatThrownBy(() -> r.replace(a.workerId(), "w2")).hasMessageContaining("node w2 is worker " + b.workerId() + " already")
                    .hasMessageContaining("stop it, remove worker " + b.workerId() + " (DELETE /api/v1/cluster/workers/" + b.workerId() + ")")
                    .extracting(WorkerRegistryTest::reasonOf).isEqualTo(RegistrationRefusedException.Reason.NODE_CONFLICT);
            assertThatThrownBy(() -> r.replace(a.workerId(), "w1")).hasMessageContaining("PUT /api/v1/cluster/workers/1/token")
                    .extracting(WorkerRegistryTest::reasonOf).isEqualTo(RegistrationRefusedException.Reason.NODE_CONFLICT);
            for (String bad : new String[] {"", "-w", "w 9", "w9\n", null}) {
                assertThatThrownBy(() -> r.replace(a.workerId(), bad)).as("node name %s", bad)
                        .extracting(WorkerRegistryTest::reasonOf).isEqualTo(RegistrationRefusedException.Reason.INVALID_NODE_NAME);
            }
            assertThat(s.workers()).containsExactlyInAnyOrder(a, b);
            assertThat(r.workers()).extracting(WorkerView::nodeName).containsExactly("w1", "w2");
        });
    }

    @Test
    void register_replacementNode_getsTheIdAndRangeAtEpochPlusOneAndBindsTheFirstTokenWithinItsLimit() {
        onCatalog((r, s) -> {
            WorkerRecord a = lost(r, "w1", TOKEN);
            a = lost(r, "w1", TOKEN); // epoch 2
            r.replace(a.workerId(), "w9");
            // OTHER_TOKEN registers two spare nodes; with a limit of 2 it could not bind the replacement
            WorkerRegistry capped = new WorkerRegistry(s, new MembershipSettings(settings.heartbeatInterval(), settings.lateAfter(),
                    settings.lostAfter(), settings.firstPbn(), settings.rangeSize(), 2), clock);
            lost(capped, "s1", OTHER_TOKEN);
            lost(capped, "s2", OTHER_TOKEN);
            assertThatThrownBy(() -> capped.register("w9", OTHER_TOKEN, "127.0.0.9:1", CAP, "v"))
                    .extracting(WorkerRegistryTest::reasonOf).isEqualTo(RegistrationRefusedException.Reason.TOO_MANY_NODES);
            String third = "00112233445566ff";
            WorkerRecord taken = capped.register("w9", third, "127.0.0.9:1", CAP, "v");
            assertThat(taken.workerId()).isEqualTo(a.workerId());
            assertThat(taken.range()).isEqualTo(a.range());
            assertThat(taken.epoch()).as("monotonic for the id").isEqualTo(3);
            assertThat(taken.tokenId()).isEqualTo(third);
            assertThat(s.workers()).contains(taken);
            capped.disconnected(taken.workerId(), taken.epoch());
            assertThatThrownBy(() -> capped.register("w9", TOKEN, "127.0.0.2:1", CAP, "v")).as("the lost host's token has no say")
                    .extracting(WorkerRegistryTest::reasonOf).isEqualTo(RegistrationRefusedException.Reason.TOKEN_MISMATCH);
        });
    }

    @Test
    void register_replacedNodeComingBack_isANewWorkerAtEpochOneAndNeverTheReplacedId() {
        onCatalog((r, s) -> {
            WorkerRecord a = lost(r, "w1", TOKEN);
            r.replace(a.workerId(), "w9");
            WorkerRecord old = r.register("w1", TOKEN, "127.0.0.2:2", CAP, "v");
            assertThat(old.workerId()).isNotEqualTo(a.workerId());
            assertThat(old.epoch()).as("new, so it drops its index").isEqualTo(1);
            assertThat(old.range().overlaps(a.range())).isFalse();
            assertThat(r.heartbeat(a.workerId(), a.epoch(), WorkerLoad.NONE)).as("the old connection's epoch is dead").isFalse();
            WorkerRecord taken = r.register("w9", OTHER_TOKEN, "127.0.0.9:1", CAP, "v");
            assertThat(taken.workerId()).isEqualTo(a.workerId());
            assertThat(taken.epoch()).isEqualTo(2);
        });
    }

    @Test
    void replace_thenMasterRestart_theReplacementIsKeptAndTheOldNameIsUnknown() {
        long[] id = new long[1];
        onCatalog((r, s) -> {
            WorkerRecord a = lost(r, "w1", TOKEN);
            lost(r, "w2", TOKEN);
            id[0] = r.replace(a.workerId(), "w9").workerId();
        });
        onCatalog((r, s) -> {
            assertThat(r.workers()).extracting(WorkerView::nodeName).containsExactly("w9", "w2");
            WorkerRecord taken = r.register("w9", OTHER_TOKEN, "127.0.0.9:1", CAP, "v");
            assertThat(taken.workerId()).isEqualTo(id[0]);
            assertThat(taken.epoch()).isEqualTo(2);
            assertThat(r.register("w1", TOKEN, "127.0.0.2:1", CAP, "v").workerId()).as("a new worker").isEqualTo(3);
        });
    }

    @Test
    void replace_unbound_anyWorkerTokenWithRoomRegistersTheNewNameFirstAndTakesTheId() {
        onCatalog((r, s) -> {
            WorkerRecord a = lost(r, "w1", TOKEN);
            r.register("w2", OTHER_TOKEN, "127.0.0.3:1", CAP, "v"); // another host's token, stolen: bound to w2, room for more
            r.replace(a.workerId(), "w9");
            WorkerRecord thief = r.register("w9", OTHER_TOKEN, "203.0.113.7:1", CAP, "v");
            assertThat(thief.workerId()).as("the window an unbound replacement leaves (documented)").isEqualTo(a.workerId());
        });
    }

    @Test
    void replace_boundToTheNewHostsToken_noOtherWorkerTokenCanRegisterTheNewNameFirst() {
        onCatalog((r, s) -> {
            WorkerRecord a = lost(r, "w1", TOKEN);
            r.register("w2", OTHER_TOKEN, "127.0.0.3:1", CAP, "v"); // another host's token, stolen: bound to w2, room for more
            String fresh = "00112233445566ff";
            WorkerRecord got = r.replace(a.workerId(), "w9", fresh);
            assertThat(got.tokenId()).isEqualTo(fresh);
            assertThat(s.workers()).as("bound on disk before it returns").contains(got);
            for (String other : new String[] {OTHER_TOKEN, TOKEN}) {
                assertThatThrownBy(() -> r.register("w9", other, "203.0.113.7:1", CAP, "v")).as("token %s", other)
                        .extracting(WorkerRegistryTest::reasonOf).isEqualTo(RegistrationRefusedException.Reason.TOKEN_MISMATCH);
            }
            WorkerRecord taken = r.register("w9", fresh, "127.0.0.9:1", CAP, "v");
            assertThat(taken.workerId()).isEqualTo(a.workerId());
            assertThat(taken.epoch()).isEqualTo(a.epoch() + 1);
        });
    }

    @Test
    void replace_boundToATokenAtItsNodeLimit_isRefusedAndNothingChanges() {
        onCatalog((r, s) -> {
            WorkerRecord a = lost(r, "w1", TOKEN);
            WorkerRegistry capped = new WorkerRegistry(s, new MembershipSettings(settings.heartbeatInterval(), settings.lateAfter(),
                    settings.lostAfter(), settings.firstPbn(), settings.rangeSize(), 1), clock);
            WorkerRecord b = lost(capped, "w2", OTHER_TOKEN);
            assertThatThrownBy(() -> capped.replace(a.workerId(), "w9", OTHER_TOKEN))
                    .extracting(WorkerRegistryTest::reasonOf).isEqualTo(RegistrationRefusedException.Reason.TOO_MANY_NODES);
            assertThat(s.workers()).containsExactlyInAnyOrder(a, b);
            assertThat(capped.replace(a.workerId(), "w9", TOKEN).tokenId()).as("its own token holds no extra node").isEqualTo(TOKEN);
        });
    }

    @Test
    void replace_removedWorker_isUnknown_andTheNameOfARemovedWorkerGoesOnlyToTheBoundToken() {
        onCatalog((r, s) -> {
            WorkerRecord a = lost(r, "w1", TOKEN);
            WorkerRecord gone = lost(r, "w2", OTHER_TOKEN);
            r.remove(gone.workerId());
            assertThatThrownBy(() -> r.replace(gone.workerId(), "w8")).isInstanceOf(UnknownWorkerException.class);
            // the removed host still retries with its token under w2: naming w2 unbound would hand it worker 1
            String fresh = "00112233445566ff";
            r.replace(a.workerId(), "w2", fresh);
            assertThatThrownBy(() -> r.register("w2", OTHER_TOKEN, "127.0.0.3:1", CAP, "v"))
                    .extracting(WorkerRegistryTest::reasonOf).isEqualTo(RegistrationRefusedException.Reason.TOKEN_MISMATCH);
            assertThat(r.register("w2", fresh, "127.0.0.9:1", CAP, "v").workerId()).isEqualTo(a.workerId());
        });
    }
}
