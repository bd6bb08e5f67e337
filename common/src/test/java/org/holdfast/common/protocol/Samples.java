package org.holdfast.common.protocol;

import io.netty.buffer.ByteBufAllocator;
import java.util.List;
import org.holdfast.common.model.Consistency;
import java.util.Random;

/** One or more instances of every message type, with edge values. */
final class Samples {
    private Samples() {
    }

    static List<Message> all(ByteBufAllocator alloc) {
        Random r = new Random(42);
        byte[] fps = new byte[3 * 32];
        r.nextBytes(fps);
        java.util.Arrays.fill(fps, 32, 64, (byte) 0); // entry 1 is a zero block
        byte[] bigFps = new byte[ProtocolLimits.MAX_RUN_ENTRIES * 32];
        r.nextBytes(bigFps);
        long[] bigTags = r.longs(ProtocolLimits.MAX_RUN_ENTRIES).toArray();
        byte[] secret = new byte[BackupReady.SECRET_BYTES];
        r.nextBytes(secret);
        byte[] bitmap = new byte[Need.bitmapBytes(11)];
        Need.set(bitmap, 0);
        Need.set(bitmap, 10);
        byte[] payload = new byte[4096];
        r.nextBytes(payload);
        byte[] fp = new byte[32];
        r.nextBytes(fp);

        Blocks blocks = Blocks.builder(alloc, 8192)
                .add(7, PayloadCodec.RAW, payload, 0, 4096)
                .add(9, PayloadCodec.ZSTD, payload, 100, 33)
                .build();
        RestoreData restoreData = RestoreData.builder(alloc, 1000, 8192)
                .add(PayloadCodec.RAW, fp, 0, payload, 0, 4096)
                .addZero()
                .add(PayloadCodec.ZSTD, fp, 0, payload, 5, 17)
                .build();
        return List.of(
                Hello.of("agent-on-host-1 ✓", "s3cret"),
                new Hello(1, "", ""),
                new HelloOk(1, "0.1.0", ProtocolLimits.MAX_FRAME),
                new ErrorMessage(ErrorCode.VOLUME_BUSY, "volume vm-01 has a backup running"),
                new BackupBegin("vm-01", 4096, 10L << 30, 0),
                new BackupBegin("x".repeat(128), 1 << 20, Long.MAX_VALUE, 42),
                new BackupBegin("vm-01", 4096, 10L << 30, 42, 0x9e3779b97f4a7c15L),
                new BackupReady(-1L, 41, 4096, BackupMode.INCREMENTAL, secret),
                new BackupReady(5, 0, 65536, BackupMode.FULL, new byte[BackupReady.SECRET_BYTES]),
                new Entries(123, 3, fps, new long[] {-7L, 0, Long.MAX_VALUE}),
                new Entries(0, ProtocolLimits.MAX_RUN_ENTRIES, bigFps, bigTags),
                new Need(123, 11, bitmap),
                new Need(0, 8, new byte[] {(byte) 0xff}),
                blocks,
                Blocks.builder(alloc, 0).build(),
                new Commit(10L << 30),
                new Commit(10L << 30, Consistency.CRASH),
                new Commit(1, Consistency.APPLICATION),
                new Committed(3, 1_700_000_000_000L, 1L << 40, 17, 12, 5, 12345),
                new Committed(4, 1_700_000_000_000L, 1L << 40, 17, 12, 5, 12345, -2L),
                Abort.INSTANCE,
                new ListSnapshots("vm-01"),
                new SnapshotList(List.of()),
                new SnapshotList(List.of(new SnapshotInfo(1, 1_700_000_000_000L, 1L << 30, 4096, 1L << 29, 262144, 999),
                        new SnapshotInfo(2, 1_700_000_100_000L, 1L << 30, 4096, 1L << 29, 12, 48))),
                new Restore("vm-01", 2, 0),
                new RestoreInfo(2, (1L << 30) + 5, 4096, 262145),
                restoreData,
                new RestoreEnd(262145),
                new RunReport("vm-01", "schedule", 1_700_000_000_000L, 1_700_000_060_000L, RunReport.Result.SUCCEEDED, 0, 2,
                        1L << 30, 1L << 20, 7, Consistency.APPLICATION, "snapshot vm-01@7 committed (incremental) on try 2"),
                new RunReport("x".repeat(128), "r".repeat(ProtocolLimits.MAX_RUN_TRIGGER), 0, 0, RunReport.Result.FAILED, 255,
                        0xffff, 0, 0, 0, Consistency.UNKNOWN, "ü".repeat(ProtocolLimits.MAX_RUN_MESSAGE / 2)),
                RunRecorded.INSTANCE,
                new Register(Register.CLUSTER_VERSION, "worker-01", "hft_x", "holdfast-server/1.0", 2, 1L << 30, 1L << 40),
                new Register(0xffff, "n".repeat(ProtocolLimits.MAX_NODE_NAME), "t".repeat(ProtocolLimits.MAX_TOKEN),
                        "v".repeat(ProtocolLimits.MAX_SERVER_VERSION), 0xffff, Long.MAX_VALUE, 0),
                new Registered(1, 1, 1L << 48, (1L << 48) + (1L << 40), 2000, "holdfast-server/1.0"),
                new Registered(0xffffffffL, Long.MAX_VALUE, 0, Long.MAX_VALUE, Integer.MAX_VALUE, ""),
                new Register(4, "worker-04", "hft_x", "holdfast-server/0.9", 2, 1L << 30, 1L << 40), // no archive epoch
                new Register(Register.ARCHIVE_EPOCH_VERSION, "worker-05", "hft_x", "holdfast-server/1.1", 2, 1L << 30, 1L << 40, 7),
                new Register(Register.COUNTS_MARK_VERSION, "worker-07", "hft_x", "holdfast-server/1.3", 2, 1L << 30, 1L << 40, 7,
                        new Register.Counts(5L << 20, 1L << 48, 9L << 20)),
                new Registered(3, 9, 1L << 48, (1L << 48) + (1L << 40), 2000, "holdfast-server/1.1", (1L << 48) + 4096, 15_000),
                new Registered(4, 1, 0, 1, 1, "", 1, Registered.MAX_LOST_AFTER_MILLIS),
                new Register(Register.NODE_GENERATION_VERSION, "worker-08", "hft_x", "holdfast-server/1.3", 2, 1L << 30, 1L << 40, 7,
                        new Register.Counts(0, 0, 0), Long.MAX_VALUE),
                new Registered(5, 2, 1L << 48, (1L << 48) + (1L << 40), 2000, "holdfast-server/1.3", 1L << 48, 15_000, 3),
                new Heartbeat(3, 1500, 1, 2, 3, new Heartbeat.RangeData(Heartbeat.RangeData.SERVING, (1L << 48) + 6, 1L << 30, 2)),
                new Heartbeat(4, 0, 0, 0, 0, new Heartbeat.RangeData(Heartbeat.RangeData.NOT_OPEN, 0, 0, 0)),
                new Heartbeat(0, 1500, 1L << 20, 1L << 30, 1L << 40),
                new Heartbeat(Long.MAX_VALUE, Heartbeat.UNKNOWN_LOAD, 0, 0, 0),
                new Heartbeat(1, 1500, 1, 2, 3, new Heartbeat.RangeData(Heartbeat.RangeData.SERVING, (1L << 48) + 6, 1L << 30)),
                new Heartbeat(2, 0, 0, 0, 0, new Heartbeat.RangeData(Heartbeat.RangeData.REFUSED, 0, 0)),
                new HeartbeatAck(Long.MAX_VALUE),
                new DedupLookup(1, 2, 2, fp64()),
                new DedupAnswer(3, 2, new long[] {0, 77}, new int[] {0, 1}, new long[] {1, 2, 3, 4, 5, 6, 7}),
                new DedupRecord(4, 2, 2, 1, fp64(), new long[] {0, 78}, new boolean[] {false, true}),
                new DedupForget(5, 2, new long[] {9, 10}, fp64()),
                new DedupControl(6, DedupControl.END_STREAM, 2),
                new DedupDone(7, new long[DedupFrames.LOAD_FIELDS]),
                new DedupDone(12, new long[] {1, 2, 3, 4, 5, 6, 7}, 1_800_000_000_000L, DedupDone.STARTED_OVER_EPOCH_GAP),
                DedupFailed.of(8, "engine closed"),
                new DedupProbe(9, 2, -5L, 7, 2, new long[] {-1L, 42}),
                new DedupProbe(10, 3, 0, 0, 0, new long[0]),
                new DedupCandidates(11, 3, new long[] {1, 2, 3, 4, 5, 6, 7}),
                new DataStoreRequest(13, PayloadCodec.RAW, 4096, 1, java.util.Arrays.copyOf(fp64(), 32), payload),
                new DataStoreRequest(14, PayloadCodec.ZSTD_FRAME, 512, 2, fp64(), new byte[] {1, 2, 3}),
                new DataStored(15, 1L << 40, 2),
                new DataStored(16, Long.MAX_VALUE - ProtocolLimits.MAX_FRAME_MEMBERS, ProtocolLimits.MAX_FRAME_MEMBERS),
                new DataSync(17),
                new DataSynced(18, (1L << 40) + 2),
                new DataSynced(19, 5, new SealedLogReport(false, List.of(new SealedLogReport.Sealed(3, 2, 7, 1000, new byte[32])),
                        List.of(1, 2), 1)),
                new DataRead(19, 2, new long[] {1L << 40, Long.MAX_VALUE}),
                new DataReadAnswer(20, 2, new long[] {1L << 40, (1L << 40) + 1}, fp64(), new byte[] {PayloadCodec.RAW, PayloadCodec.ZSTD},
                        new int[] {512, 4096}, new int[] {512, 3}, new byte[515]),
                DataFailed.of(21, "PBN 5 is outside this worker's range"),
                new DataRepair(22, 1L << 40, PayloadCodec.RAW, 4096, java.util.Arrays.copyOf(fp64(), 32), payload),
                new DataRepair(23, Long.MAX_VALUE, PayloadCodec.ZSTD, 512, java.util.Arrays.copyOf(fp64(), 32), new byte[] {4, 5}),
                new CountsCheck(24, 1L << 40, (1L << 40) + CountsCheck.MAX_SPAN, Long.MAX_VALUE, new long[] {1L << 40, (1L << 40) + 9},
                        new int[] {1, Integer.MAX_VALUE}, new int[] {0, 2}, new long[] {0, Long.MAX_VALUE}),
                new CountsCheck(-4L, 1, 2, 0, new long[0], new int[0], new int[0], new long[0]),
                new CountsChecked(24, CountsChecked.COMPARED, 8191, 1, 2, 0, Long.MAX_VALUE, new long[] {1L << 40, 5},
                        new int[] {CountsChecked.KIND_RC_BELOW, CountsChecked.KIND_NOT_HELD}, ""),
                CountsChecked.refused(-4L, "COUNTS_CHECK refused: PBNs [1, 2) are not all in this worker's range"),
                new SealedLogsPush(31, new SealedLogReport(true, List.of(new SealedLogReport.Sealed(3, 2, 7, 1000, new byte[32])),
                        List.of(), 0)),
                new SealedLogsPush(-1L, new SealedLogReport(false, List.of(), List.of(Integer.MAX_VALUE, 1), 0xffffffffL)),
                new SealedLogsRecorded(31),
                new SealedLogsRecorded(-1L),
                new TakeoverRecords(29, 0),
                new TakeoverRecords(-1L, Integer.MAX_VALUE),
                new TakeoverRecordsPart(29, TakeoverRecordsPart.RECORDS, true, true, List.of(new SealedLogReport.Sealed(3, 2, 7, 1000,
                        new byte[32]), new SealedLogReport.Sealed(Integer.MAX_VALUE, Long.MAX_VALUE, Long.MAX_VALUE, Long.MAX_VALUE,
                        new byte[32])), ""),
                new TakeoverRecordsPart(-1L, TakeoverRecordsPart.NONE, false, false, List.of(), ""),
                new TakeoverRecordsPart(30, TakeoverRecordsPart.FAILED, false, false, List.of(), "the master's record is unreadable"),
                new GcProtect(25, 7, false, 2, new long[] {1L << 48, Long.MAX_VALUE}),
                new GcProtect(-1L, -2L, true, 1, new long[] {1}),
                new GcProtected(26, new int[0]),
                new GcProtected(27, new int[] {0, 3, ProtocolLimits.MAX_GC_PROTECT_PBNS - 1}),
                GcGuardFailed.of(28, "PBN 5 is outside this worker's range"),
                new GcSessionEnd(-3L),
                new GcDelta(22, 0, 3, new byte[] {GcDelta.RC_ADD, GcDelta.RAISE_EXPIRY, GcDelta.PIN_ADD},
                        new long[] {1L << 48, (1L << 48) + 1, Long.MAX_VALUE}, new long[] {-1, 1_800_000_000_000L, 1}),
                new GcDelta(GcDelta.MAX_OP_ID, GcDelta.MAX_PART, 1, new byte[] {GcDelta.RC_ADD}, new long[] {1}, new long[] {Long.MIN_VALUE}),
                new GcDeltaApplied(23, 2),
                new GcDeltaApplied(GcDelta.MAX_OP_ID, GcDelta.MAX_PART),
                GcDeltaFailed.of(24, 1, "PBN 5 is outside this worker's range"),
                new GcSweep(25, GcSweep.NO_TIME, 0),
                new GcSweep(-1L, Long.MAX_VALUE, GcSweep.DRY_RUN),
                new GcSwept(26, 0, 1_800_000_000_000L, 3, 1, 10, 10, 4, 5, 6, 1 << 20, 42),
                new GcSwept(-1L, GcSweep.DRY_RUN, Long.MAX_VALUE, Long.MAX_VALUE, Long.MAX_VALUE, 0, Long.MAX_VALUE, Long.MAX_VALUE,
                        Long.MAX_VALUE, Long.MAX_VALUE, GcSwept.UNKNOWN_BYTES, Long.MAX_VALUE),
                GcSweepFailed.of(27, GcSweepFailed.BUSY, "a sweep of PBNs [2^48, 2^49) runs already"),
                GcSweepFailed.of(28, GcSweepFailed.FAILED, ""),
                new StaleMarks(31, 2, new long[] {1L << 48, Long.MAX_VALUE}, java.util.Arrays.copyOf(fp64(), 64)),
                new StaleMarks(-1L, 1, new long[] {1}, new byte[32]),
                StaleMarksTaken.of(31, StaleMarksTaken.TAKEN, ""),
                StaleMarksTaken.of(-1L, StaleMarksTaken.REFUSED, "PBN 5 is outside worker w1's range"));
    }

    private static byte[] fp64() {
        byte[] b = new byte[64];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) (i * 7 + 1);
        }
        return b;
    }
}
