package org.holdfast.common.model;

/**
 * How consistent a snapshot's content is: the agent says it at COMMIT (protocol version 3), the
 * catalog keeps it with the snapshot, and the REST API shows its {@link #wireName()}.
 */
public enum Consistency {
    /** 0: the agent did not say (a protocol version 2 agent, or a snapshot stored before the field existed). */
    UNKNOWN,
    /** 1: read from a live source, as after a power cut: file systems recover it, open applications may not. */
    CRASH,
    /** 2: a pre-backup hook (freeze, flush, LVM snapshot) ran and succeeded before the source was read. */
    APPLICATION;

    private static final Consistency[] BY_CODE = values();

    /** The u8 on the wire and in the catalog's snapshot record (the declaration order above). */
    public int code() {
        return ordinal();
    }

    /** The lower-case name the API, the agent's options and the docs use. */
    public String wireName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }

    /** The value for a code, or {@code null} if none has it. */
    public static Consistency fromCode(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }

    /** The value for a name ({@code crash}, {@code application}, {@code unknown}; any case), or {@code null}. */
    public static Consistency fromName(String name) {
        for (Consistency c : BY_CODE) {
            if (c.name().equalsIgnoreCase(name)) {
                return c;
            }
        }
        return null;
    }
}
