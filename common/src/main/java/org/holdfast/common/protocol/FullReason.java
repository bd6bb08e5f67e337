package org.holdfast.common.protocol;

/**
 * Why BACKUP_READY asks for a full backup (protocol version 5: a trailing u8, left out for
 * {@link #UNSTATED}), so the agent can say which instead of guessing.
 */
public enum FullReason {
    /** 0: not said (an incremental, or a server before version 5); never on the wire. */
    UNSTATED(0),
    /** 1: the agent's base sequence is not the volume's newest snapshot (or it has none, or the volume is new). */
    BASE_NOT_NEWEST(1),
    /** 2: the newest snapshot is the agent's base but references blocks marked damaged: the full upload repairs them. */
    DAMAGED_BLOCKS(2),
    /** 3: the newest snapshot has the base's sequence but another identity (the sequence was handed out again). */
    IDENTITY_MISMATCH(3);

    private final int code;

    FullReason(int code) {
        this.code = code;
    }

    /** The u8 written on the wire. */
    public int code() {
        return code;
    }

    /** The reason for a wire value (1 to 3), or {@code null} for any other. */
    public static FullReason fromWire(int code) {
        return switch (code) {
            case 1 -> BASE_NOT_NEWEST;
            case 2 -> DAMAGED_BLOCKS;
            case 3 -> IDENTITY_MISMATCH;
            default -> null;
        };
    }
}
