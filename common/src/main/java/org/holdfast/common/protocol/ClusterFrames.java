package org.holdfast.common.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;

/**
 * Body layout of the cluster port's frames (master/worker mode), kept beside the agent frames'
 * in {@link MessageParser} and {@link FrameEncoder} so that the same frame header, limits and
 * discard-after-violation rules apply. All integers big-endian; a string is u16 length + UTF-8.
 *
 * <pre>
 *  REGISTER      | clusterVersion:u16 | nodeName:str | token:str | softwareVersion:str | cpus:u16 |
 *                | heapMaxBytes:u64 | diskBytes:u64 | [ archiveEpoch:u64 ]   (clusterVersion 5 and up: present)
 *                [ importedMark:u64 | importedPbnFirst:u64 | acknowledged:u64 | generation:u64 ]   (clusterVersion 7 and up: present)
 *  REGISTERED    | workerId:u32 | epoch:u64 | pbnFirst:u64 | pbnLimit:u64 | heartbeatMillis:u32 | masterVersion:str |
 *                [ pbnFloor:u64 | lostAfterMillis:u32 [ generation:u64 ] ]   (cluster version 5: both; lostAfterMillis 1..86400000;
 *                                                                              generation: on a link of version 7)
 *  HEARTBEAT     | sequence:u64 | loadMilli:u32 | heapUsedBytes:u64 | heapMaxBytes:u64 | diskFreeBytes:u64 |
 *                [ rangeState:u8 | nextPbn:u64 | logBytes:u64 [ archiveEpoch:u64 ] ]
 *                (range-data report: cluster version 3; its archive epoch: version 5; 36, 53 or 61 bytes in all)
 *  HEARTBEAT_ACK | sequence:u64 |
 * </pre>
 *
 * <p>The dedup frames (0x44-0x4C) are in {@link DedupFrames}, the data frames (0x4D-0x53, and DATA_REPAIR 0x5E) in {@link DataFrames},
 * the GC delta frames (0x54-0x56) in {@link GcDeltaFrames}, the GC sweep frames (0x5B-0x5D) in {@link GcSweepFrames},
 * the counts check frames (0x60-0x61, cluster version 7) in {@link CountsCheckFrames}, the takeover records frames
 * (0x62-0x63, cluster version 7) in {@link TakeoverRecordsFrames}, the stale marks frames (0x64-0x65, cluster version 8)
 * in {@link StaleMarksFrames}, the sealed-log report between syncs (0x66-0x67, cluster version 8) in {@link SealedLogsFrames}.
 * The grace protection frames (0x57-0x5A) are in {@link GcGuardFrames}, which the decoder and encoder call directly.
 * A master sends the GC frames (0x54-0x5D) only on a link registered at {@link Register#GC_FRAMES_VERSION} or newer.
 */
final class ClusterFrames {
    /** HEARTBEAT without a range-data report. */
    private static final int HEARTBEAT_BODY = 8 + 4 + 8 + 8 + 8;
    /** The range-data report a HEARTBEAT of cluster version 3 may end with. */
    private static final int RANGE_DATA_BODY = 1 + 8 + 8;
    /** The archive epoch a range-data report of cluster version 5 ends with. */
    private static final int ARCHIVE_EPOCH_BODY = 8;
    /** The counts mark a REGISTER of cluster version 7 ends with. */
    private static final int COUNTS_BODY = 8 + 8 + 8;
    /** The node generation a REGISTER of cluster version 7 ends with, and a REGISTERED on such a link. */
    private static final int GENERATION_BODY = 8;

    private ClusterFrames() {
    }

    /** Largest body of a cluster frame type. */
    static int maxBody(MessageType type) {
        return switch (type) {
            case REGISTER -> 2 + 2 + ProtocolLimits.MAX_NODE_NAME + 2 + ProtocolLimits.MAX_TOKEN + 2
                    + ProtocolLimits.MAX_SERVER_VERSION + 2 + 8 + 8 + 8 + COUNTS_BODY + GENERATION_BODY;
            case REGISTERED -> 4 + 8 + 8 + 8 + 4 + 2 + ProtocolLimits.MAX_SERVER_VERSION + 8 + 4 + GENERATION_BODY;
            case HEARTBEAT -> HEARTBEAT_BODY + RANGE_DATA_BODY + ARCHIVE_EPOCH_BODY;
            case HEARTBEAT_ACK -> 8;
            default -> SealedLogsFrames.isSealedLogs(type) ? SealedLogsFrames.maxBody(type)
                    : StaleMarksFrames.isStaleMarks(type) ? StaleMarksFrames.maxBody(type)
                    : TakeoverRecordsFrames.isTakeoverRecords(type) ? TakeoverRecordsFrames.maxBody(type)
                    : CountsCheckFrames.isCountsCheck(type) ? CountsCheckFrames.maxBody(type)
                    : GcSweepFrames.isGcSweep(type) ? GcSweepFrames.maxBody(type)
                    : GcDeltaFrames.isGcDelta(type) ? GcDeltaFrames.maxBody(type)
                    : DataFrames.isData(type) ? DataFrames.maxBody(type) : DedupFrames.maxBody(type);
        };
    }

    /** Body bytes of cluster message {@code m}. */
    static long bodyBytes(Message m) {
        return switch (m.type()) {
            case REGISTER -> {
                Register r = (Register) m;
                yield 2 + str(r.nodeName()) + str(r.token()) + str(r.softwareVersion()) + 2 + 8 + 8
                        + (r.archiveEpoch() == Register.NO_ARCHIVE_EPOCH ? 0 : 8) + (r.counts() == null ? 0 : COUNTS_BODY)
                        + (r.generation() == Register.NO_GENERATION ? 0 : GENERATION_BODY);
            }
            case REGISTERED -> 4 + 8 + 8 + 8 + 4 + str(((Registered) m).masterVersion())
                    + (((Registered) m).pbnFloor() == Registered.NO_PBN_FLOOR ? 0 : 8 + 4)
                    + (((Registered) m).generation() == Register.NO_GENERATION ? 0 : GENERATION_BODY);
            case HEARTBEAT -> {
                Heartbeat.RangeData d = ((Heartbeat) m).rangeData();
                yield HEARTBEAT_BODY + (d == null ? 0 : RANGE_DATA_BODY + (d.archiveEpoch() == Register.NO_ARCHIVE_EPOCH ? 0 : ARCHIVE_EPOCH_BODY));
            }
            case HEARTBEAT_ACK -> 8;
            default -> SealedLogsFrames.isSealedLogs(m.type()) ? SealedLogsFrames.bodyBytes(m)
                    : StaleMarksFrames.isStaleMarks(m.type()) ? StaleMarksFrames.bodyBytes(m)
                    : TakeoverRecordsFrames.isTakeoverRecords(m.type()) ? TakeoverRecordsFrames.bodyBytes(m)
                    : CountsCheckFrames.isCountsCheck(m.type()) ? CountsCheckFrames.bodyBytes(m)
                    : GcSweepFrames.isGcSweep(m.type()) ? GcSweepFrames.bodyBytes(m)
                    : GcDeltaFrames.isGcDelta(m.type()) ? GcDeltaFrames.bodyBytes(m)
                    : DataFrames.isData(m.type()) ? DataFrames.bodyBytes(m) : DedupFrames.bodyBytes(m);
        };
    }

    private static int str(String s) {
        return 2 + ByteBufUtil.utf8Bytes(s);
    }

    /** Writes the body of cluster message {@code m}. */
    static void writeBody(Message m, ByteBuf out) {
        switch (m.type()) {
            case REGISTER -> {
                Register r = (Register) m;
                out.writeShort(r.clusterVersion());
                FrameEncoder.writeStr(out, r.nodeName());
                FrameEncoder.writeStr(out, r.token());
                FrameEncoder.writeStr(out, r.softwareVersion());
                out.writeShort(r.cpus());
                out.writeLong(r.heapMaxBytes());
                out.writeLong(r.diskBytes());
                if (r.archiveEpoch() != Register.NO_ARCHIVE_EPOCH) {
                    out.writeLong(r.archiveEpoch());
                }
                if (r.counts() != null) {
                    out.writeLong(r.counts().importedMark());
                    out.writeLong(r.counts().importedPbnFirst());
                    out.writeLong(r.counts().acknowledged());
                }
                if (r.generation() != Register.NO_GENERATION) {
                    out.writeLong(r.generation());
                }
            }
            case REGISTERED -> {
                Registered r = (Registered) m;
                out.writeInt((int) r.workerId());
                out.writeLong(r.epoch());
                out.writeLong(r.pbnFirst());
                out.writeLong(r.pbnLimit());
                out.writeInt(r.heartbeatMillis());
                FrameEncoder.writeStr(out, r.masterVersion());
                if (r.pbnFloor() != Registered.NO_PBN_FLOOR) {
                    out.writeLong(r.pbnFloor());
                    out.writeInt((int) r.lostAfterMillis());
                }
                if (r.generation() != Register.NO_GENERATION) {
                    out.writeLong(r.generation());
                }
            }
            case HEARTBEAT -> {
                Heartbeat h = (Heartbeat) m;
                out.writeLong(h.sequence());
                out.writeInt((int) h.loadMilli());
                out.writeLong(h.heapUsedBytes());
                out.writeLong(h.heapMaxBytes());
                out.writeLong(h.diskFreeBytes());
                if (h.rangeData() != null) {
                    out.writeByte(h.rangeData().state());
                    out.writeLong(h.rangeData().nextPbn());
                    out.writeLong(h.rangeData().logBytes());
                    if (h.rangeData().archiveEpoch() != Register.NO_ARCHIVE_EPOCH) {
                        out.writeLong(h.rangeData().archiveEpoch());
                    }
                }
            }
            case HEARTBEAT_ACK -> out.writeLong(((HeartbeatAck) m).sequence());
            default -> {
                if (SealedLogsFrames.isSealedLogs(m.type())) {
                    SealedLogsFrames.writeBody(m, out);
                } else if (StaleMarksFrames.isStaleMarks(m.type())) {
                    StaleMarksFrames.writeBody(m, out);
                } else if (TakeoverRecordsFrames.isTakeoverRecords(m.type())) {
                    TakeoverRecordsFrames.writeBody(m, out);
                } else if (CountsCheckFrames.isCountsCheck(m.type())) {
                    CountsCheckFrames.writeBody(m, out);
                } else if (GcSweepFrames.isGcSweep(m.type())) {
                    GcSweepFrames.writeBody(m, out);
                } else if (GcDeltaFrames.isGcDelta(m.type())) {
                    GcDeltaFrames.writeBody(m, out);
                } else if (DataFrames.isData(m.type())) {
                    DataFrames.writeBody(m, out);
                } else {
                    DedupFrames.writeBody(m, out);
                }
            }
        }
    }

    /** Parses a cluster frame's body; a value out of range is BAD_FRAME (the records' checks), a long string LIMIT_EXCEEDED. */
    static Message parseBody(MessageType type, ByteBuf b) {
        return switch (type) {
            case REGISTER -> {
                int version = BodyFields.u16(b, "clusterVersion");
                String node = BodyFields.str(b, "nodeName", ProtocolLimits.MAX_NODE_NAME);
                String token = BodyFields.str(b, "token", ProtocolLimits.MAX_TOKEN);
                String software = BodyFields.str(b, "softwareVersion", ProtocolLimits.MAX_SERVER_VERSION);
                int cpus = BodyFields.u16(b, "cpus");
                long heap = BodyFields.u64(b, "heapMaxBytes");
                long disk = BodyFields.u64(b, "diskBytes");
                // present exactly from version 5 on: missing is a short body, and an older version's is trailing bytes
                long archive = version >= Register.ARCHIVE_EPOCH_VERSION ? BodyFields.u64(b, "archiveEpoch") : Register.NO_ARCHIVE_EPOCH;
                // present exactly from version 7 on, as the archive epoch from 5
                Register.Counts counts = version >= Register.COUNTS_MARK_VERSION ? new Register.Counts(BodyFields.u64(b, "importedMark"),
                        BodyFields.u64(b, "importedPbnFirst"), BodyFields.u64(b, "acknowledged")) : null;
                long generation = version >= Register.NODE_GENERATION_VERSION ? BodyFields.u64(b, "generation") : Register.NO_GENERATION;
                yield new Register(version, node, token, software, cpus, heap, disk, archive, counts, generation);
            }
            case REGISTERED -> {
                long workerId = BodyFields.u32(b, "workerId");
                long epoch = BodyFields.u64(b, "epoch");
                long first = BodyFields.u64(b, "pbnFirst");
                long limit = BodyFields.u64(b, "pbnLimit");
                int heartbeat = (int) BodyFields.u32(b, "heartbeatMillis");
                String master = BodyFields.str(b, "masterVersion", ProtocolLimits.MAX_SERVER_VERSION);
                // version 5's pair, all or nothing: a floor without the lost-after is a short body (BAD_FRAME)
                boolean v5 = b.isReadable();
                long floor = v5 ? BodyFields.u64(b, "pbnFloor") : Registered.NO_PBN_FLOOR;
                long lostAfter = v5 ? BodyFields.u32(b, "lostAfterMillis") : Registered.NO_LOST_AFTER;
                // version 7's generation, after the pair (the worker knows its link's version; the decoder takes either)
                long generation = v5 && b.isReadable() ? BodyFields.u64(b, "generation") : Register.NO_GENERATION;
                yield new Registered(workerId, epoch, first, limit, heartbeat, master, floor, lostAfter, generation);
            }
            case HEARTBEAT -> new Heartbeat(BodyFields.u64(b, "sequence"), BodyFields.u32(b, "loadMilli"),
                    BodyFields.u64(b, "heapUsedBytes"), BodyFields.u64(b, "heapMaxBytes"), BodyFields.u64(b, "diskFreeBytes"),
                    // the report is all or nothing: a partial one is a short body (BAD_FRAME)
                    b.isReadable() ? new Heartbeat.RangeData(BodyFields.u8(b, "rangeState"), BodyFields.u64(b, "nextPbn"),
                            BodyFields.u64(b, "logBytes"), b.isReadable() ? BodyFields.u64(b, "archiveEpoch")
                            : Register.NO_ARCHIVE_EPOCH) : null);
            case HEARTBEAT_ACK -> new HeartbeatAck(BodyFields.u64(b, "sequence"));
            default -> SealedLogsFrames.isSealedLogs(type) ? SealedLogsFrames.parseBody(type, b)
                    : StaleMarksFrames.isStaleMarks(type) ? StaleMarksFrames.parseBody(type, b)
                    : TakeoverRecordsFrames.isTakeoverRecords(type) ? TakeoverRecordsFrames.parseBody(type, b)
                    : CountsCheckFrames.isCountsCheck(type) ? CountsCheckFrames.parseBody(type, b)
                    : GcSweepFrames.isGcSweep(type) ? GcSweepFrames.parseBody(type, b)
                    : GcDeltaFrames.isGcDelta(type) ? GcDeltaFrames.parseBody(type, b)
                    : DataFrames.isData(type) ? DataFrames.parseBody(type, b) : DedupFrames.parseBody(type, b);
        };
    }
}
