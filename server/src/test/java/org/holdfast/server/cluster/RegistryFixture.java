package org.holdfast.server.cluster;

import java.time.Duration;
import java.time.Instant;
import org.holdfast.server.engine.SteppingClock;

/** The capacity, token, membership settings and clock the worker registry tests register nodes with. */
final class RegistryFixture {
    /** What a test node reports it can hold. */
    static final WorkerCapacity CAP = new WorkerCapacity(2, 1L << 30, 1L << 40);
    /** The id of the worker token most tests register with. */
    static final String TOKEN = "0123456789abcdef";
    /** Heartbeats every 2 s, late after 6 s, lost after 15 s; ranges of 2^20 PBNs from the default first PBN. */
    static final MembershipSettings SETTINGS = new MembershipSettings(Duration.ofSeconds(2), Duration.ofSeconds(6),
            Duration.ofSeconds(15), MembershipSettings.DEFAULT_FIRST_PBN, 1L << 20);

    private RegistryFixture() {
    }

    /** A clock the test steps by hand, at a fixed start. */
    static SteppingClock clock() {
        return new SteppingClock(Instant.ofEpochMilli(1_700_000_000_000L));
    }
}
