package org.holdfast.common.protocol;

import java.util.List;

/**
 * TAKEOVER_RECORDS_PART (0x63), master to worker (cluster version 7): one bounded part of the master's
 * records of the link's worker's sealed logs, in log id order, answering {@link TakeoverRecords}
 * {@code requestId}. {@code status} {@link #RECORDS}: {@code sealed} (at most {@link #MAX_LOGS});
 * {@code more}: ask again after the last; {@code complete}: the worker reported a digest of every
 * log (else logs without one are adopted unchecked). {@link #NONE}: the master holds no record of
 * the worker (it never reported: an older release). {@link #FAILED}: the records could not be read
 * ({@code message} says why); the takeover is refused, as a check that cannot be made.
 */
public record TakeoverRecordsPart(long requestId, int status, boolean complete, boolean more, List<SealedLogReport.Sealed> sealed,
                                  String message) implements Message {
    /** Status: records follow. */
    public static final int RECORDS = 0;
    /** Status: the master holds no record of the worker. */
    public static final int NONE = 1;
    /** Status: the master could not read its records. */
    public static final int FAILED = 2;
    /** Most records one part carries (60 bytes each: 60 KiB). */
    public static final int MAX_LOGS = 1024;

    public TakeoverRecordsPart {
        sealed = List.copyOf(sealed);
        if (status < RECORDS || status > FAILED || sealed.size() > MAX_LOGS || (status != RECORDS && (more || !sealed.isEmpty()))) {
            throw new IllegalArgumentException("TAKEOVER_RECORDS_PART status " + status + " (0 to 2) with " + sealed.size()
                    + " records (at most " + MAX_LOGS + ", none unless status 0), more " + more);
        }
    }

    /** The answer that the master could not read its records: {@code message} says why (cut to the wire's limit). */
    public static TakeoverRecordsPart failed(long requestId, String message) {
        return new TakeoverRecordsPart(requestId, FAILED, false, false, List.of(),
                WireStrings.truncate(message == null ? "" : message, ProtocolLimits.MAX_ERROR_MESSAGE));
    }

    /** The answer that the master holds no record of the worker. */
    public static TakeoverRecordsPart none(long requestId) {
        return new TakeoverRecordsPart(requestId, NONE, false, false, List.of(), "");
    }

    @Override
    public MessageType type() {
        return MessageType.TAKEOVER_RECORDS_PART;
    }
}
