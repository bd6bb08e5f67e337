package org.holdfast.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import org.holdfast.common.id.PbnRange;
import org.junit.jupiter.api.Test;

/**
 * One {@link Member}'s state and view follow the monotonic time it was last heard at, its current
 * connection is only the one of its record's epoch, and a replacement forgets what the lost host said.
 */
class MemberTest {
    private final MembershipSettings settings = RegistryFixture.SETTINGS;
    private final WorkerRecord stored = new WorkerRecord(1, "w1", 3, new PbnRange(100, 200), 1, 1, RegistryFixture.TOKEN);

    @Test
    void state_storedNeverHeard_isLostAndSilentWithoutEnd() {
        Member m = new Member(stored);
        assertThat(m.state(settings, 0)).isEqualTo(MemberState.LOST);
        assertThat(m.view(settings, 5).silentNanos()).isEqualTo(Long.MAX_VALUE);
        assertThat(m.isCurrent(stored.epoch())).as("no connection").isFalse();
    }

    @Test
    void state_heardThenSilent_goesUpLateLostOnTheMonotonicTime_andAHeartbeatBringsItBack() {
        Member m = new Member(stored);
        long at = 9_000_000_000L;
        WorkerRecord again = stored.reregistered(42, RegistryFixture.TOKEN);
        m.connected(again, 42, at);
        m.describedAs(null, RegistryFixture.CAP, null);
        assertThat(m.isCurrent(again.epoch())).isTrue();
        assertThat(m.isCurrent(stored.epoch())).as("the older connection's epoch").isFalse();
        assertThat(m.state(settings, at + settings.lateAfter().toNanos())).isEqualTo(MemberState.UP);
        assertThat(m.state(settings, at + settings.lateAfter().toNanos() + 1)).isEqualTo(MemberState.LATE);
        assertThat(m.state(settings, at + settings.lostAfter().toNanos() + 1)).isEqualTo(MemberState.LOST);
        WorkerLoad load = new WorkerLoad(1, 2, 3, 4);
        m.heard(43, at + settings.lostAfter().toNanos(), load);
        WorkerView v = m.view(settings, at + settings.lostAfter().toNanos() + 1);
        assertThat(v.state()).isEqualTo(MemberState.UP);
        assertThat(v.silentNanos()).isEqualTo(1);
        assertThat(v.lastHeartbeatMillis()).isEqualTo(43);
        assertThat(v.load()).isEqualTo(load);
        assertThat(v.address()).as("null reported as empty").isEmpty();
        assertThat(v.epoch()).isEqualTo(again.epoch());
        m.disconnected();
        assertThat(m.state(settings, at + settings.lostAfter().toNanos() + 1)).isEqualTo(MemberState.LOST);
        assertThat(m.isCurrent(again.epoch())).isFalse();
    }

    @Test
    void replacedBy_forgetsWhatTheLostHostReportedAndWhenItWasHeard() {
        Member m = new Member(stored);
        m.connected(stored.reregistered(42, RegistryFixture.TOKEN), 42, 7);
        m.describedAs("127.0.0.2:1", RegistryFixture.CAP, "1.0");
        m.heard(43, 8, new WorkerLoad(1, 2, 3, 4));
        m.disconnected();
        WorkerRecord r = m.record().replacedBy("w9", "");
        m.replacedBy(r);
        WorkerView v = m.view(settings, 9);
        assertThat(v.nodeName()).isEqualTo("w9");
        assertThat(v.address()).isEmpty();
        assertThat(v.softwareVersion()).isEmpty();
        assertThat(v.load()).isEqualTo(WorkerLoad.NONE);
        assertThat(v.capacity()).isEqualTo(new WorkerCapacity(0, 0, 0));
        assertThat(v.lastHeartbeatMillis()).isZero();
        assertThat(v.silentNanos()).isEqualTo(Long.MAX_VALUE);
        assertThat(v.state()).isEqualTo(MemberState.LOST);
    }
}
