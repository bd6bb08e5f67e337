package org.holdfast.common.protocol;

/** The u16 codes carried by an {@code ERROR} frame (docs/protocol.md, "Error codes"). */
public enum ErrorCode {
    /** Malformed frame: truncated body, trailing bytes, unknown type, bad magic, bad field value. */
    BAD_FRAME(1),
    /** The frame or HELLO names a protocol version this peer does not speak. */
    UNSUPPORTED_VERSION(2),
    UNKNOWN_VOLUME(3),
    UNKNOWN_SNAPSHOT(4),
    /** An uploaded payload does not hash to the fingerprint sent for its LBN. */
    FINGERPRINT_MISMATCH(5),
    /** A frame, string, count or payload is over its limit in {@link ProtocolLimits}. */
    LIMIT_EXCEEDED(6),
    /** A message arrived that the session's state does not allow (e.g. BLOCKS before BACKUP_READY). */
    BAD_STATE(7),
    STORAGE_FULL(8),
    INTERNAL(9),
    UNAUTHORIZED(10),
    BLOCK_SIZE_MISMATCH(11),
    VOLUME_BUSY(12),
    /** BACKUP_BEGIN refused: the volume's size is over the quota an operator set on it; nothing was stored. */
    QUOTA_EXCEEDED(13),
    /** A stored block failed its check (restore): the message names the data log, PBN, volume, snapshot and LBN; the block is marked bad. */
    CORRUPT_DATA(14),
    /**
     * REGISTER refused: another live connection holds this node name, or the node is bound to
     * another worker token; the worker retries after a backoff.
     */
    NODE_CONFLICT(15),
    /**
     * The backup or restore stopped because a dedup or data worker it needed is lost (or none is
     * connected): transient, nothing was committed; the message names the worker; run it again. A peer
     * that predates it reads it as INTERNAL.
     */
    WORKER_UNAVAILABLE(16);

    private final int code;

    ErrorCode(int code) {
        this.code = code;
    }

    /** The u16 written on the wire. */
    public int code() {
        return code;
    }

    /** The error code for a wire value, or {@code null} if v1 defines none. */
    public static ErrorCode fromCode(int code) {
        for (ErrorCode c : values()) {
            if (c.code == code) {
                return c;
            }
        }
        return null;
    }
}
