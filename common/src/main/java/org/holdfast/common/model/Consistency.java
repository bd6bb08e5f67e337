package org.holdfast.common.model;

/**
 * How consistent a snapshot's content is: the agent says it at COMMIT (protocol version 3), the
 * catalog keeps it with the snapshot, and the REST API shows its {@link #wireName()}.
 */
public enum Consistency {
    /** 0: the agent did not say (a protocol version 2 agent, or a snapshot stored before the field existed). */
    UNKNOWN(0, "unknown"),
    /** 1: read from a live source, as after a power cut: file systems recover it, open applications may not. */
    CRASH(1, "crash"),
    /** 2: a pre-backup hook (freeze, flush, LVM snapshot) ran and succeeded before the source was read. */
    APPLICATION(2, "application");

    private final int code;
    private final String wireName;

    Consistency(int code, String wireName) {
        this.code = code;
        this.wireName = wireName;
    }

    /** The u8 on the wire and in the catalog's snapshot record. */
    public int code() {
        return code;
    }

    /** The lower-case name the API, the agent's options and the docs use. */
    public String wireName() {
        return wireName;
    }

    /** The value for a code, or {@code null} if none has it. */
    public static Consistency fromCode(int code) {
        for (Consistency c : values()) {
            if (c.code == code) {
                return c;
            }
        }
        return null;
    }

    /** The value for a name ({@code crash}, {@code application}, {@code unknown}; any case), or {@code null}. */
    public static Consistency fromName(String name) {
        for (Consistency c : values()) {
            if (c.wireName.equalsIgnoreCase(name)) {
                return c;
            }
        }
        return null;
    }
}
