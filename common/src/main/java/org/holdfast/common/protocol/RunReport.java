package org.holdfast.common.protocol;

import java.util.Objects;
import org.holdfast.common.model.Consistency;

/**
 * RUN_REPORT (0x30, protocol version 3), agent to server: how one run of the daemon's backup of
 * {@code volume} ended, hooks and retries included, so failed runs (a pre hook that failed, a server
 * that was down) are visible on the server too. {@code snapshotSequence} is 0 when no snapshot
 * committed. The server answers {@link RunRecorded}.
 */
public record RunReport(String volume, String trigger, long startMillis, long endMillis, Result result, int exitCode,
                        int attempts, long bytesRead, long bytesSent, long snapshotSequence, Consistency consistency,
                        String message) implements Message {
    /** Fixed-size part of the body: everything but the three strings' bytes. */
    static final int FIXED_BYTES = 3 * 2 + 8 + 8 + 1 + 1 + 2 + 8 + 8 + 8 + 1;

    public RunReport {
        WireStrings.check("volume", volume, ProtocolLimits.MAX_VOLUME_NAME);
        WireStrings.check("trigger", trigger, ProtocolLimits.MAX_RUN_TRIGGER);
        WireStrings.check("message", message, ProtocolLimits.MAX_RUN_MESSAGE);
        Objects.requireNonNull(result, "result");
        Objects.requireNonNull(consistency, "consistency");
        if (exitCode < 0 || exitCode > 0xff) {
            throw new IllegalArgumentException("exitCode out of u8 range: " + exitCode);
        }
        Hello.checkU16("attempts", attempts);
    }

    /** A report whose message is cut to {@link ProtocolLimits#MAX_RUN_MESSAGE} bytes (a long hook error must not stop it). */
    public static RunReport cut(String volume, String trigger, long startMillis, long endMillis, Result result, int exitCode,
                                int attempts, long bytesRead, long bytesSent, long snapshotSequence, Consistency consistency,
                                String message) {
        return new RunReport(volume, WireStrings.truncate(trigger, ProtocolLimits.MAX_RUN_TRIGGER), startMillis, endMillis,
                result, exitCode, Math.min(attempts, 0xffff), bytesRead, bytesSent, snapshotSequence, consistency,
                WireStrings.truncate(message == null ? "" : message, ProtocolLimits.MAX_RUN_MESSAGE));
    }

    @Override
    public MessageType type() {
        return MessageType.RUN_REPORT;
    }

    /** The u8 {@code result}: how the run ended; the code is the declaration order, the word the lower-case name. */
    public enum Result {
        /** 0: a snapshot committed. */
        SUCCEEDED,
        /** 1: no snapshot (pre hook failed, backup failed after its retries). */
        FAILED,
        /** 2: the daemon stopped during the run. */
        INTERRUPTED;

        public int code() {
            return ordinal();
        }

        /** The word the daemon's run log and the REST API use. */
        public String wireName() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }

        /** The result for a wire code, or {@code null}. */
        public static Result fromCode(int code) {
            return code >= 0 && code < values().length ? values()[code] : null;
        }

        /** The result for a run-log word, or {@code null}. */
        public static Result fromName(String word) {
            return java.util.Arrays.stream(values()).filter(r -> r.wireName().equals(word)).findFirst().orElse(null);
        }
    }
}
