package org.holdfast.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.holdfast.common.id.PbnRange;
import org.junit.jupiter.api.Test;

/**
 * Each refusal of {@link RegistrationRefusals} on its own, over a table of stored workers: it refuses
 * exactly the case it names (with the reason the transport maps), lets the neighbouring allowed case
 * pass, and changes nothing in the table either way.
 */
class RegistrationRefusalsTest {
    private static final String A = "aaaaaaaaaaaaaaaa";
    private static final String B = "bbbbbbbbbbbbbbbb";
    private static final long FIRST = MembershipSettings.DEFAULT_FIRST_PBN;
    private static final long SIZE = 1L << 20;
    /** Two node names per token, so the cap is reached with the stored workers below. */
    private final MembershipSettings settings = new MembershipSettings(Duration.ofSeconds(2), Duration.ofSeconds(6),
            Duration.ofSeconds(15), FIRST, SIZE, 2);
    private final MembershipStore store = MembershipStore.inMemory();

    private static WorkerRecord stored(long id, String node, String token) {
        return new WorkerRecord(id, node, 1, new PbnRange(FIRST + (id - 1) * SIZE, FIRST + id * SIZE), 1, 1, token);
    }

    /** w1 and w2 bound to token A (at its cap of two), w3 unbound. */
    private Members members() {
        store.put(stored(1, "w1", A));
        store.put(stored(2, "w2", A));
        store.put(stored(3, "w3", ""));
        return new Members(store);
    }

    private static RegistrationRefusedException.Reason reasonOf(Throwable t) {
        return ((RegistrationRefusedException) t).reason();
    }

    @Test
    void checkNodeName_malformedNames_areRefusedInvalidNodeName_wellFormedOnesPass() {
        for (String bad : new String[] {"", "-w", ".w", "w 1", "w\n1", "w/1", "x".repeat(65)}) {
            assertThatThrownBy(() -> RegistrationRefusals.checkNodeName(bad)).as("'%s'", bad)
                    .extracting(RegistrationRefusalsTest::reasonOf).isEqualTo(RegistrationRefusedException.Reason.INVALID_NODE_NAME);
        }
        assertThatThrownBy(() -> RegistrationRefusals.checkNodeName(null)).isInstanceOf(RegistrationRefusedException.class);
        for (String good : new String[] {"w", "W-1.b_2", "9", "x".repeat(64)}) {
            assertThatCode(() -> RegistrationRefusals.checkNodeName(good)).as("'%s'", good).doesNotThrowAnyException();
        }
    }

    @Test
    void refuseToken_boundNodeWithAnotherToken_isTokenMismatchNamingTheWorkerNotTheToken() {
        Members m = members();
        RegistrationRefusals r = new RegistrationRefusals(m, settings);
        assertThatThrownBy(() -> r.refuseToken(m.byNode("w1"), "w1", B))
                .extracting(RegistrationRefusalsTest::reasonOf).isEqualTo(RegistrationRefusedException.Reason.TOKEN_MISMATCH);
        assertThatThrownBy(() -> r.refuseToken(m.byNode("w1"), "w1", B)).hasMessageContaining("/api/v1/cluster/workers/1/token")
                .hasMessageNotContaining(A);
        assertThatCode(() -> r.refuseToken(m.byNode("w1"), "w1", A)).as("its own token, at its cap: binds nothing new")
                .doesNotThrowAnyException();
    }

    @Test
    void refuseToken_tokenAtItsCap_refusesANewOrUnboundNode_anotherTokenPasses() {
        Members m = members();
        RegistrationRefusals r = new RegistrationRefusals(m, settings);
        assertThatThrownBy(() -> r.refuseToken(null, "w9", A))
                .extracting(RegistrationRefusalsTest::reasonOf).isEqualTo(RegistrationRefusedException.Reason.TOO_MANY_NODES);
        assertThatThrownBy(() -> r.refuseToken(m.byNode("w3"), "w3", A)).as("binding the unbound w3 would be a third")
                .extracting(RegistrationRefusalsTest::reasonOf).isEqualTo(RegistrationRefusedException.Reason.TOO_MANY_NODES);
        assertThatCode(() -> r.refuseToken(null, "w9", B)).doesNotThrowAnyException();
        assertThatCode(() -> r.refuseToken(m.byNode("w3"), "w3", B)).doesNotThrowAnyException();
        assertThat(m.heldBy(A)).isEqualTo(2);
        assertThat(m.byNode("w3").record().bound()).as("a check binds nothing").isFalse();
    }

    @Test
    void refuseLive_connectedAndHeard_isNodeConflictUntilSilentPastLostAfterOrDisconnected() {
        Members m = members();
        RegistrationRefusals r = new RegistrationRefusals(m, settings);
        Member w1 = m.byNode("w1");
        assertThatCode(() -> r.refuseLive(w1, "w1", 0)).as("stored, never connected").doesNotThrowAnyException();
        long at = 7_000_000_000L;
        w1.connected(w1.record().reregistered(2, A), 2, at);
        w1.describedAs("127.0.0.2:4000", RegistryFixture.CAP, "v");
        long lost = settings.lostAfter().toNanos();
        assertThatThrownBy(() -> r.refuseLive(w1, "w1", at + lost)).as("silent exactly lost-after: not lost yet")
                .extracting(RegistrationRefusalsTest::reasonOf).isEqualTo(RegistrationRefusedException.Reason.NODE_CONFLICT);
        assertThatThrownBy(() -> r.refuseLive(w1, "w1", at)).hasMessageContaining("127.0.0.2:4000");
        assertThatCode(() -> r.refuseLive(w1, "w1", at + lost + 1)).doesNotThrowAnyException();
        w1.disconnected();
        assertThatCode(() -> r.refuseLive(w1, "w1", at)).doesNotThrowAnyException();
    }

    @Test
    void rangeOf_cutsConsecutiveRangesAndRefusesNoRangeLeftPastThePbnSpace() {
        RegistrationRefusals r = new RegistrationRefusals(members(), settings);
        assertThat(r.rangeOf(1)).isEqualTo(new PbnRange(FIRST, FIRST + SIZE));
        assertThat(r.rangeOf(4)).isEqualTo(new PbnRange(FIRST + 3 * SIZE, FIRST + 4 * SIZE));
        long past = (Long.MAX_VALUE - FIRST) / SIZE + 1;
        assertThatThrownBy(() -> r.rangeOf(past))
                .extracting(RegistrationRefusalsTest::reasonOf).isEqualTo(RegistrationRefusedException.Reason.NO_RANGE_LEFT);
    }

    @Test
    void refuseOverlap_aNewRangeCutIntoAStoredOne_isNoRangeLeftNamingTheSizeToSetBack() {
        Members m = members();
        RegistrationRefusals smaller = new RegistrationRefusals(m, new MembershipSettings(Duration.ofSeconds(2),
                Duration.ofSeconds(6), Duration.ofSeconds(15), FIRST, SIZE / 2, 2));
        WorkerRecord cut = new WorkerRecord(4, "w4", 1, smaller.rangeOf(4), 1, 1, B); // [FIRST + 1.5 SIZE, FIRST + 2 SIZE): in w2's
        assertThatThrownBy(() -> smaller.refuseOverlap(cut)).hasMessageContaining("set it back to " + SIZE)
                .extracting(RegistrationRefusalsTest::reasonOf).isEqualTo(RegistrationRefusedException.Reason.NO_RANGE_LEFT);
        WorkerRecord next = new WorkerRecord(4, "w4", 1, new RegistrationRefusals(m, settings).rangeOf(4), 1, 1, B);
        assertThatCode(() -> smaller.refuseOverlap(next)).doesNotThrowAnyException();
    }

    @Test
    void refuseReplacement_ownNameOrAnotherWorkersName_isNodeConflict_aFreeNamePasses() {
        Members m = members();
        RegistrationRefusals r = new RegistrationRefusals(m, settings);
        Member w3 = m.byNode("w3");
        assertThatThrownBy(() -> r.refuseReplacement(w3, "w3")).hasMessageContaining("rebind")
                .extracting(RegistrationRefusalsTest::reasonOf).isEqualTo(RegistrationRefusedException.Reason.NODE_CONFLICT);
        assertThatThrownBy(() -> r.refuseReplacement(w3, "w1")).hasMessageContaining("is worker 1 already")
                .extracting(RegistrationRefusalsTest::reasonOf).isEqualTo(RegistrationRefusedException.Reason.NODE_CONFLICT);
        assertThatCode(() -> r.refuseReplacement(w3, "w9")).doesNotThrowAnyException();
        assertThat(m.byNode("w9")).isNull();
        assertThat(m.byNode("w3")).isSameAs(w3);
    }
}
