package org.holdfast.common.protocol;

/**
 * HEARTBEAT (0x42), worker to master every heartbeat interval: a sequence number and the load
 * figures the worker can read cheaply. {@code loadMilli} is the one-minute system load average
 * times 1000, or {@link #UNKNOWN_LOAD} where the platform has none. From cluster version 3
 * ({@link Register#RANGE_DATA_REPORT_VERSION}) a worker with range data appends {@code rangeData}
 * (null: not sent, as by an older worker or one without range data). The master answers HEARTBEAT_ACK.
 */
public record Heartbeat(long sequence, long loadMilli, long heapUsedBytes, long heapMaxBytes, long diskFreeBytes, RangeData rangeData)
        implements Message {
    /** {@code loadMilli} when the system load average is not available. */
    public static final long UNKNOWN_LOAD = 0xffffffffL;

    /**
     * The worker's range data as it stands (data on workers): {@code state} one of {@link #NOT_OPEN}
     * (not opened yet), {@link #SERVING}, {@link #REFUSED} (the store would not open: every data call
     * is refused); {@code nextPbn} the PBN its next stored block gets (0 unless serving) and
     * {@code logBytes} the bytes its data logs take on the worker's disk (0 unless serving);
     * {@code archiveEpoch} (cluster version 5) the takeover epoch its store archives at (0: none, a
     * local store or not open; {@link Register#NO_ARCHIVE_EPOCH}: not sent).
     */
    public record RangeData(int state, long nextPbn, long logBytes, long archiveEpoch) {
        public static final int NOT_OPEN = 0;
        public static final int SERVING = 1;
        public static final int REFUSED = 2;

        /** A report without the archive epoch (cluster versions 3 and 4). */
        public RangeData(int state, long nextPbn, long logBytes) {
            this(state, nextPbn, logBytes, Register.NO_ARCHIVE_EPOCH);
        }

        /** This report with the archive epoch {@code e} (0: none), as a worker of cluster version 5 sends it. */
        public RangeData withArchiveEpoch(long e) {
            return new RangeData(state, nextPbn, logBytes, e);
        }

        public RangeData {
            if (state < NOT_OPEN || state > REFUSED) {
                throw new IllegalArgumentException("range data state must be 0 (not open), 1 (serving) or 2 (refused), not " + state);
            }
            checkNotNegative("nextPbn", nextPbn);
            checkNotNegative("logBytes", logBytes);
            if (archiveEpoch < Register.NO_ARCHIVE_EPOCH) {
                throw new IllegalArgumentException("archiveEpoch must not be negative: " + archiveEpoch);
            }
            if (state != SERVING && (nextPbn != 0 || logBytes != 0)) {
                throw new IllegalArgumentException("range data that is not serving reports no nextPbn or logBytes, got " + nextPbn
                        + " and " + logBytes);
            }
        }
    }

    /** A heartbeat without a range-data report (cluster versions 1 and 2). */
    public Heartbeat(long sequence, long loadMilli, long heapUsedBytes, long heapMaxBytes, long diskFreeBytes) {
        this(sequence, loadMilli, heapUsedBytes, heapMaxBytes, diskFreeBytes, null);
    }

    public Heartbeat {
        checkNotNegative("sequence", sequence);
        if (loadMilli < 0 || loadMilli > UNKNOWN_LOAD) {
            throw new IllegalArgumentException("loadMilli out of u32 range: " + loadMilli);
        }
        checkNotNegative("heapUsedBytes", heapUsedBytes);
        checkNotNegative("heapMaxBytes", heapMaxBytes);
        checkNotNegative("diskFreeBytes", diskFreeBytes);
    }

    static void checkNotNegative(String field, long v) {
        if (v < 0) {
            throw new IllegalArgumentException(field + " must not be negative: " + v);
        }
    }

    @Override
    public MessageType type() {
        return MessageType.HEARTBEAT;
    }
}
