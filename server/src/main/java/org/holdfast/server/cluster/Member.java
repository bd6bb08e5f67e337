package org.holdfast.server.cluster;

/**
 * One worker as the master knows it now: its stored record, whether a connection of it is open, and
 * what that connection said and when. When is kept twice: on the wall clock for display, on the
 * master's monotonic clock for the state (a wall clock stepped forward must not make a live node
 * lost). Not thread-safe: {@link WorkerRegistry} changes it under its lock.
 */
final class Member {
    private WorkerRecord record;
    private boolean connected;
    /** Wall time, for display. */
    private long lastHeardMillis;
    /** Monotonic, for the state; meaningful only if {@link #heard}. */
    private long lastHeardNanos;
    /** Heard since the master started (and since a replacement). */
    private boolean heard;
    private String address = "";
    private WorkerLoad load = WorkerLoad.NONE;
    private WorkerCapacity capacity = new WorkerCapacity(0, 0, 0);
    private String softwareVersion = "";

    /** A worker as stored, not connected and not heard: lost until it registers. */
    Member(WorkerRecord record) {
        this.record = record;
    }

    WorkerRecord record() {
        return record;
    }

    /** Takes {@code r} as this worker's record (stored already), its connection unchanged: a rebind. */
    void record(WorkerRecord r) {
        this.record = r;
    }

    boolean connected() {
        return connected;
    }

    /** Where the connection came from ({@code ""}: none since the master started or the worker was replaced). */
    String address() {
        return address;
    }

    /** True if the connection of {@code epoch} is open and the current one. */
    boolean isCurrent(long epoch) {
        return connected && record.epoch() == epoch;
    }

    /** A connection registered as {@code r} (stored already) at {@code millis} wall time, {@code nanos} monotonic. */
    void connected(WorkerRecord r, long millis, long nanos) {
        record = r;
        connected = true;
        lastHeardMillis = millis;
        lastHeardNanos = nanos;
        heard = true;
    }

    /** What the connection said at its registration; its load is none until its first heartbeat. */
    void describedAs(String address, WorkerCapacity capacity, String softwareVersion) {
        this.address = address == null ? "" : address;
        this.load = WorkerLoad.NONE;
        this.capacity = capacity;
        this.softwareVersion = softwareVersion == null ? "" : softwareVersion;
    }

    /** A heartbeat reporting {@code load}, heard at {@code millis} wall time, {@code nanos} monotonic. */
    void heard(long millis, long nanos, WorkerLoad load) {
        lastHeardMillis = millis;
        lastHeardNanos = nanos;
        this.load = load;
    }

    void disconnected() {
        connected = false;
    }

    /** Handed to another node as {@code r} (stored already): what the lost host reported is not the new host's, nor when it was heard. */
    void replacedBy(WorkerRecord r) {
        record = r;
        lastHeardMillis = 0;
        heard = false;
        address = "";
        load = WorkerLoad.NONE;
        capacity = new WorkerCapacity(0, 0, 0);
        softwareVersion = "";
    }

    /** The state at {@code nowNanos} on the monotonic clock, by {@code settings}' thresholds. */
    MemberState state(MembershipSettings settings, long nowNanos) {
        return settings.stateAfter(connected, nowNanos - lastHeardNanos);
    }

    /** This worker as listed at {@code nowNanos} on the monotonic clock. */
    WorkerView view(MembershipSettings settings, long nowNanos) {
        return new WorkerView(record.workerId(), record.nodeName(), address, state(settings, nowNanos), record.epoch(), record.range(),
                lastHeardMillis, load, capacity, softwareVersion, record.tokenId(), heard ? nowNanos - lastHeardNanos : Long.MAX_VALUE);
    }
}
