package org.holdfast.common.protocol;

/**
 * REGISTER (0x40), worker to master on the cluster port: the first frame of a worker's connection.
 * Names the worker's node, carries its {@code worker} token, its software version and what it can
 * offer (CPUs, heap, disk) and, from cluster version 5, the takeover epoch its range data archives
 * at ({@code archiveEpoch}: 0 none recorded, {@link #NO_ARCHIVE_EPOCH} not sent) and, from cluster
 * version 7, what its GC counts are ({@code counts}, {@link Counts}; null: not sent) and the node generation
 * its range data holds ({@code generation}: 0 none, {@link #NO_GENERATION} not sent); the master answers
 * REGISTERED or ERROR (docs/protocol.md, "Cluster messages").
 */
public record Register(int clusterVersion, String nodeName, String token, String softwareVersion, int cpus,
                       long heapMaxBytes, long diskBytes, long archiveEpoch, Counts counts, long generation) implements Message {
    /**
     * The newest cluster protocol version this build speaks; a worker offers it, and the next older
     * one again to a master that refused it as UNSUPPORTED_VERSION (a master before version 2
     * accepts only 1, one before version 3 only 1 and 2, one before version 4 only 1 to 3). Version 2:
     * DEDUP_DONE may report an index start-over. Version 3: HEARTBEAT may carry a range-data report.
     * Version 4: the worker takes the GC frames (GC_DELTA, GC_PROTECT, GC_SWEEP and their kin).
     * Version 5: REGISTER ends with the archive epoch, a range-data report may carry it, and REGISTERED
     * ends with the PBN floor (the takeover fence, {@link #ARCHIVE_EPOCH_VERSION}). Version 6: the
     * worker takes DATA_REPAIR ({@link #REPAIR_VERSION}). Version 7: REGISTER ends with the worker's
     * counts mark ({@link #COUNTS_MARK_VERSION}), the worker takes COUNTS_CHECK
     * ({@link #COUNTS_CHECK_VERSION}), an archiving worker's DATA_SYNCED ends with its sealed-log
     * report ({@link #LOG_DIGEST_VERSION}), and REGISTER and REGISTERED end with the node generation
     * ({@link #NODE_GENERATION_VERSION}), and the master answers TAKEOVER_RECORDS
     * ({@link #TAKEOVER_RECORDS_VERSION}). Version 8: an archiving worker also reports its sealed logs
     * between syncs, in SEALED_LOGS, which the master acknowledges ({@link #SYNC_REPORT_VERSION});
     * the worker sends STALE_MARKS and the master forwards them ({@link #STALE_MARKS_VERSION}).
     */
    public static final int CLUSTER_VERSION = 8;
    /** The oldest version a master of this build accepts. */
    public static final int MIN_CLUSTER_VERSION = 1;
    /** The first version whose DEDUP_DONE may carry an index start-over report. */
    public static final int START_OVER_REPORT_VERSION = 2;
    /** The first version whose HEARTBEAT may carry a range-data report ({@link Heartbeat.RangeData}). */
    public static final int RANGE_DATA_REPORT_VERSION = 3;
    /**
     * The first version whose worker takes the GC frames (0x54-0x5D): a worker before it closes its
     * link on them, so a master sends them only on a link of this version or newer, and a master
     * keeping its blocks on the workers registers no worker below it.
     */
    public static final int GC_FRAMES_VERSION = 4;
    /**
     * The first version whose REGISTER ends with {@code archiveEpoch} (u64), whose range-data report
     * may end with it, and whose REGISTERED ends with {@code pbnFloor} (u64): the master refuses a node
     * whose range data archives at an epoch below one it heard for the worker, and tells a node the
     * lowest PBN it may hand out. A master of an older release refuses the longer REGISTER as
     * BAD_FRAME ("REGISTER has 8 trailing bytes"), and the worker then offers version 4.
     */
    public static final int ARCHIVE_EPOCH_VERSION = 5;
    /**
     * The first version whose worker takes DATA_REPAIR (a bad block repaired in place on its worker):
     * a worker before it closes its link on the frame, so a master sends it only on a link of this
     * version or newer, and stores a new copy of the block on an older one. A master of an older
     * release refuses version 6 as UNSUPPORTED_VERSION, and the worker then offers version 5.
     */
    public static final int REPAIR_VERSION = 6;
    /**
     * The first version whose REGISTER ends with {@link Counts} (3 x u64): the mark of the counts file
     * the worker last imported and the range it was for, and the highest GC delta it acknowledged. The
     * master lifts a catalog restore's counts fence of a worker that imported counts exported after the
     * restore, and fences a worker whose counts it cannot account for. A master of an older release
     * refuses the longer REGISTER as BAD_FRAME ("REGISTER has 32 trailing bytes", with the generation), and the worker then
     * offers version 6.
     */
    public static final int COUNTS_MARK_VERSION = 7;
    /**
     * The first version whose worker takes COUNTS_CHECK (the online check of its GC counts): a worker
     * before it closes its link on the frame, so a master sends it only on a link of this version or
     * newer, and reports an older worker "not checked". A master of an older release refuses a version 7
     * REGISTER (see {@link #COUNTS_MARK_VERSION}), and the worker then offers version 6.
     */
    public static final int COUNTS_CHECK_VERSION = 7;
    /**
     * The first version whose archiving worker appends a {@link SealedLogReport} to DATA_SYNCED (each
     * sealed log's size and SHA-256, which the master records and checks its copies of a lost worker's
     * range against): a worker sends it only on a link of this version or newer. A master of an older
     * release refuses a version 7 REGISTER (see {@link #COUNTS_MARK_VERSION}), and the worker then offers 6.
     */
    public static final int LOG_DIGEST_VERSION = 7;
    /**
     * The first version whose REGISTER ends, after the counts mark, with the node generation its range
     * data holds (u64), and whose REGISTERED (on a link of this version) ends with the generation the
     * master issued for this registration: the master refuses a node presenting a generation older than
     * one the worker id acknowledged (a cloned or restored range-data directory). Part of version 7, which
     * was not released without it.
     */
    public static final int NODE_GENERATION_VERSION = 7;
    /** {@code generation} of a REGISTER that does not carry it (a worker before {@link #NODE_GENERATION_VERSION}). */
    public static final long NO_GENERATION = -1;
    /**
     * The first version whose master answers TAKEOVER_RECORDS (0x62) with its records of the worker's
     * sealed logs, which a node taking the range over from the bucket checks each adopted log against.
     */
    public static final int TAKEOVER_RECORDS_VERSION = 7;
    /**
     * The first version whose archiving worker sends SEALED_LOGS (0x66) between syncs, soon after uploads
     * were confirmed, and whose master records it and answers SEALED_LOGS_RECORDED (0x67): a worker sends
     * it only on a link of this version or newer. A master of an older release refuses version 8 as
     * UNSUPPORTED_VERSION (the REGISTER is version 7's), and the worker then offers 7: its logs are
     * recorded at its syncs only, as before.
     */
    public static final int SYNC_REPORT_VERSION = 8;
    /**
     * The first version whose worker sends STALE_MARKS (0x64, the blocks its range sweep freed) and whose
     * master forwards them to the other workers' engines and answers STALE_MARKS_TAKEN (0x65). REGISTER and
     * REGISTERED are as in version 7; a master of an older release refuses version 8 as UNSUPPORTED_VERSION,
     * and the worker then offers 7 and keeps its marks.
     */
    public static final int STALE_MARKS_VERSION = 8;
    /** {@code archiveEpoch} of a REGISTER that does not carry it (an older worker's). */
    public static final long NO_ARCHIVE_EPOCH = -1;

    /**
     * What a worker's GC counts are (cluster version 7): {@code importedMark} the mark of the counts file
     * {@code worker-gc-import} last built its GC metadata from (0: none since the metadata was created),
     * {@code importedPbnFirst} the first PBN of that file's range (0 with no import), {@code acknowledged}
     * the highest GC delta id it logged and acknowledged (0: none; {@link #UNKNOWN}: its record does not
     * read, so the master must assume anything).
     */
    public record Counts(long importedMark, long importedPbnFirst, long acknowledged) {
        /** A worker whose range was never GC'd here: nothing imported, nothing acknowledged. */
        public static final Counts NONE = new Counts(0, 0, 0);
        /** {@code acknowledged} of a worker whose acknowledged mark cannot be read. */
        public static final long UNKNOWN = Long.MAX_VALUE;

        public Counts {
            Heartbeat.checkNotNegative("importedMark", importedMark);
            Heartbeat.checkNotNegative("importedPbnFirst", importedPbnFirst);
            Heartbeat.checkNotNegative("acknowledged", acknowledged);
        }

        /** Whether the worker holds GC counts of its own (it imported some, or logged a delta). */
        public boolean any() {
            return importedMark > 0 || acknowledged > 0;
        }
    }

    /** As the canonical constructor, with generation 0 (none held) from version 7 on ({@link #NO_GENERATION} before). */
    public Register(int clusterVersion, String nodeName, String token, String softwareVersion, int cpus, long heapMaxBytes,
                    long diskBytes, long archiveEpoch, Counts counts) {
        this(clusterVersion, nodeName, token, softwareVersion, cpus, heapMaxBytes, diskBytes, archiveEpoch, counts,
                clusterVersion >= NODE_GENERATION_VERSION ? 0 : NO_GENERATION);
    }

    /** As the canonical constructor, with {@link Counts#NONE} from version 7 on (null before). */
    public Register(int clusterVersion, String nodeName, String token, String softwareVersion, int cpus, long heapMaxBytes,
                    long diskBytes, long archiveEpoch) {
        this(clusterVersion, nodeName, token, softwareVersion, cpus, heapMaxBytes, diskBytes, archiveEpoch,
                clusterVersion >= COUNTS_MARK_VERSION ? Counts.NONE : null);
    }

    /** A REGISTER of a node with no archive epoch recorded (0 from version 5 on; not sent before). */
    public Register(int clusterVersion, String nodeName, String token, String softwareVersion, int cpus, long heapMaxBytes,
                    long diskBytes) {
        this(clusterVersion, nodeName, token, softwareVersion, cpus, heapMaxBytes, diskBytes,
                clusterVersion >= ARCHIVE_EPOCH_VERSION ? 0 : NO_ARCHIVE_EPOCH);
    }

    public Register {
        Hello.checkU16("clusterVersion", clusterVersion);
        WireStrings.check("nodeName", nodeName, ProtocolLimits.MAX_NODE_NAME);
        WireStrings.check("token", token, ProtocolLimits.MAX_TOKEN);
        WireStrings.check("softwareVersion", softwareVersion, ProtocolLimits.MAX_SERVER_VERSION);
        Hello.checkU16("cpus", cpus);
        Heartbeat.checkNotNegative("heapMaxBytes", heapMaxBytes);
        Heartbeat.checkNotNegative("diskBytes", diskBytes);
        // the field is on the wire exactly from version 5 on
        if (clusterVersion >= ARCHIVE_EPOCH_VERSION ? archiveEpoch < 0 : archiveEpoch != NO_ARCHIVE_EPOCH) {
            throw new IllegalArgumentException("archiveEpoch " + archiveEpoch + " with cluster version " + clusterVersion
                    + ": versions from " + ARCHIVE_EPOCH_VERSION + " carry one of 0 or more, older ones none");
        }
        if ((clusterVersion >= COUNTS_MARK_VERSION) != (counts != null)) {
            throw new IllegalArgumentException("counts " + counts + " with cluster version " + clusterVersion + ": versions from "
                    + COUNTS_MARK_VERSION + " carry them, older ones none");
        }
        if (clusterVersion >= NODE_GENERATION_VERSION ? generation < 0 : generation != NO_GENERATION) {
            throw new IllegalArgumentException("generation " + generation + " with cluster version " + clusterVersion + ": versions from "
                    + NODE_GENERATION_VERSION + " carry one of 0 or more, older ones none");
        }
    }

    @Override
    public MessageType type() {
        return MessageType.REGISTER;
    }

    @Override
    public String toString() {
        return "Register[clusterVersion=" + clusterVersion + ", nodeName=" + nodeName + ", token="
                + (token.isEmpty() ? "none" : "***") + ", softwareVersion=" + softwareVersion + ", cpus=" + cpus
                + ", heapMaxBytes=" + heapMaxBytes + ", diskBytes=" + diskBytes + ", archiveEpoch=" + archiveEpoch + ", counts=" + counts
                + ", generation=" + generation + "]";
    }
}
