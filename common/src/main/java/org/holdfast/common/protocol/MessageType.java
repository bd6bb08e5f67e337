package org.holdfast.common.protocol;

/** The frame types of the protocol with their wire codes (docs/protocol.md, "Messages"). */
public enum MessageType {
    HELLO(0x01),
    HELLO_OK(0x02),
    ERROR(0x03),
    BACKUP_BEGIN(0x10),
    BACKUP_READY(0x11),
    ENTRIES(0x12),
    NEED(0x13),
    BLOCKS(0x14),
    COMMIT(0x16),
    COMMITTED(0x17),
    ABORT(0x18),
    LIST_SNAPSHOTS(0x20),
    SNAPSHOT_LIST(0x21),
    RESTORE(0x22),
    RESTORE_INFO(0x23),
    RESTORE_DATA(0x24),
    RESTORE_END(0x25),
    RUN_REPORT(0x30),
    RUN_RECORDED(0x31),
    /** Cluster port (master/worker mode) from here on; never valid on the agent port. */
    REGISTER(0x40),
    REGISTERED(0x41),
    HEARTBEAT(0x42),
    HEARTBEAT_ACK(0x43),
    /** The dedup calls on the worker link (remote dedup workers). */
    DEDUP_LOOKUP(0x44),
    DEDUP_ANSWER(0x45),
    DEDUP_RECORD(0x46),
    DEDUP_FORGET(0x47),
    DEDUP_CONTROL(0x48),
    DEDUP_DONE(0x49),
    DEDUP_FAILED(0x4A),
    /** The two-phase broadcast's probe and its answer. */
    DEDUP_PROBE(0x4B),
    DEDUP_CANDIDATES(0x4C),
    /** The data calls on the worker link (data on workers: a worker stores and serves its PBN range). */
    DATA_STORE(0x4D),
    DATA_STORED(0x4E),
    DATA_SYNC(0x4F),
    DATA_SYNCED(0x50),
    DATA_READ(0x51),
    DATA_READ_ANSWER(0x52),
    DATA_FAILED(0x53),
    /** The GC deltas on the worker link (distributed GC: a worker logs the GC updates of its PBN range). */
    GC_DELTA(0x54),
    GC_DELTA_APPLIED(0x55),
    GC_DELTA_FAILED(0x56),
    /** The grace protection of a backup's blocks on the worker that owns them (distributed GC). */
    GC_PROTECT(0x57),
    GC_PROTECTED(0x58),
    GC_GUARD_FAILED(0x59),
    GC_SESSION_END(0x5A),
    /** A worker's sweep of its PBN range on the master's request (distributed GC). */
    GC_SWEEP(0x5B),
    GC_SWEPT(0x5C),
    GC_SWEEP_FAILED(0x5D),
    /** The repair of a bad block in place on the worker that owns it (data on workers, cluster version 6). */
    DATA_REPAIR(0x5E),
    /** The online check of a worker's GC counts against the master's catalog (data on workers, cluster version 7). */
    COUNTS_CHECK(0x60),
    COUNTS_CHECKED(0x61),

    TAKEOVER_RECORDS(0x62),
    TAKEOVER_RECORDS_PART(0x63),
    /** A worker's freed PBNs forwarded by the master to the other workers' engines (cluster version 8). */
    STALE_MARKS(0x64),
    STALE_MARKS_TAKEN(0x65),
    /** A worker's sealed-log report between syncs and the master's acknowledgement (cluster version 8). */
    SEALED_LOGS(0x66),
    SEALED_LOGS_RECORDED(0x67);

    private static final MessageType[] BY_CODE = new MessageType[256];

    static {
        for (MessageType t : values()) {
            BY_CODE[t.code] = t;
        }
    }

    private final int code;

    MessageType(int code) {
        this.code = code;
    }

    /** The u8 written in the frame's type field. */
    public int code() {
        return code;
    }

    /** The type for a wire code, or {@code null} if v1 defines none. */
    public static MessageType fromCode(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }
}
