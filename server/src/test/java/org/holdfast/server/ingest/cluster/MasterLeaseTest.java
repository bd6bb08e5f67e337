package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The delete lease's lost-after: never longer than the master's, this node's own against a master that does not say. */
class MasterLeaseTest {
    @Test
    void masterShorter_leaseUsesTheMasters_andNeverGrantsMore() {
        MasterLease lease = new MasterLease(Duration.ofSeconds(60));
        lease.masterLostAfter(Duration.ofSeconds(2));
        lease.heard(System.nanoTime());
        assertThat(lease.lostAfter()).isEqualTo(Duration.ofSeconds(2));
        assertThat(lease.safeNanos()).isPositive().isLessThanOrEqualTo(Duration.ofSeconds(2).toNanos());
    }

    @Test
    void acknowledgedOneSecondAgo_masterTwoSeconds_leaseGoneThoughOwnSixtyWouldHoldIt() {
        MasterLease lease = new MasterLease(Duration.ofSeconds(60));
        lease.heard(System.nanoTime() - Duration.ofSeconds(1).toNanos());
        assertThat(lease.safeNanos()).as("own 60 s: held").isPositive();
        lease.masterLostAfter(Duration.ofSeconds(2));
        assertThat(lease.safeNanos()).as("master's 2 s: lapsed at 1 s").isZero();
    }

    @Test
    void registeredAsAnotherWorkerId_noLeaseOverTheFormerIdsRange_andTheNewOneStartsAtItsRegister() {
        MasterLease lease = new MasterLease(Duration.ofSeconds(60));
        lease.registered(1, System.nanoTime());
        assertThat(lease.safeNanos(1)).isPositive();
        // its node name went to another worker: the master's takeover wait for worker 1 never hears this node again
        lease.registered(2, System.nanoTime() - Duration.ofHours(1).toNanos());
        assertThat(lease.safeNanos(1)).as("worker 1's range may be taken over now").isZero();
        assertThat(lease.safeNanos(2)).as("from its own REGISTER, an hour ago: lapsed").isZero();
        lease.heard(System.nanoTime());
        assertThat(lease.safeNanos(2)).isPositive();
        assertThat(lease.safeNanos(1)).isZero();
    }

    @Test
    void masterLonger_leaseKeepsTheOwn() {
        MasterLease lease = new MasterLease(Duration.ofSeconds(15));
        lease.masterLostAfter(Duration.ofSeconds(90));
        assertThat(lease.lostAfter()).isEqualTo(Duration.ofSeconds(15));
    }

    @Test
    void olderMasterAfterANewerOne_leaseReturnsToTheOwn() {
        MasterLease lease = new MasterLease(Duration.ofSeconds(15));
        lease.masterLostAfter(Duration.ofSeconds(2));
        lease.masterLostAfter(null); // a REGISTERED of cluster version 4: no lost-after
        assertThat(lease.lostAfter()).isEqualTo(Duration.ofSeconds(15));
    }
}
