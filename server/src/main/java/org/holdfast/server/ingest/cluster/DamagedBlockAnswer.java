package org.holdfast.server.ingest.cluster;

import java.util.HexFormat;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.holdfast.common.id.Fingerprint;

/**
 * A worker's DATA_FAILED to a DATA_READ whose first PBN's record failed its check on the worker (the
 * block is damaged there, not unreachable), as its message carries it: {@code damaged PBN <pbn>
 * fingerprint <64 hex digits, or "unknown">: <what the check found>}. The master's verify and image
 * API tell it from a worker that is down or refusing, which must never mark a block bad.
 */
public record DamagedBlockAnswer(long pbn, byte[] fingerprint, String problem) {
    /** What a worker answers for a PBN it handed out but holds no record of (freed by its GC, or lost). */
    public static final String NOT_HELD = "no record of it on this worker (freed, or lost) though this worker handed it out";
    private static final Pattern FORMAT = Pattern.compile("damaged PBN (\\d+) fingerprint ([0-9a-f]{64}|unknown): (.*)", Pattern.DOTALL);

    /** The message a worker sends; {@code fingerprint} null if its location index holds none for the PBN. */
    public static String message(long pbn, byte[] fingerprint, String problem) {
        return "damaged PBN " + pbn + " fingerprint " + (fingerprint == null ? "unknown" : HexFormat.of().formatHex(fingerprint))
                + ": " + problem;
    }

    /** True if the worker holds no record of the PBN any more ({@link #NOT_HELD}), rather than a record that failed its check. */
    public boolean notHeld() {
        return NOT_HELD.equals(problem);
    }

    /** The answer a DATA_FAILED message carries, or null if it is another failure; an unknown fingerprint reads as all zero. */
    public static DamagedBlockAnswer parse(String message) {
        Matcher m = FORMAT.matcher(message);
        if (!m.matches()) {
            return null;
        }
        byte[] fp = "unknown".equals(m.group(2)) ? new byte[Fingerprint.BYTES] : HexFormat.of().parseHex(m.group(2));
        return new DamagedBlockAnswer(Long.parseLong(m.group(1)), fp, m.group(3));
    }
}
