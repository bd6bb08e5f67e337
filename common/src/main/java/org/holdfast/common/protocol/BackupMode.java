package org.holdfast.common.protocol;

/** The u8 {@code mode} of {@code BACKUP_READY}: whether the agent may send only its changed LBNs. */
public enum BackupMode {
    /** 0: the server's parent is the agent's base; send only the LBNs changed since it. */
    INCREMENTAL(0),
    /** 1: send every LBN of the volume, zero blocks included; the server keeps what did not change. */
    FULL(1);

    private final int code;

    BackupMode(int code) {
        this.code = code;
    }

    /** The u8 written on the wire. */
    public int code() {
        return code;
    }

    /** The mode for a wire value, or {@code null} if v1 defines none. */
    public static BackupMode fromCode(int code) {
        return switch (code) {
            case 0 -> INCREMENTAL;
            case 1 -> FULL;
            default -> null;
        };
    }
}
