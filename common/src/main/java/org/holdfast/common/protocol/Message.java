package org.holdfast.common.protocol;

/**
 * One decoded frame of the protocol. Each record's components are the frame's body fields in wire
 * order (docs/protocol.md); the records refuse values over {@link ProtocolLimits}, so anything
 * that can be constructed can be encoded.
 *
 * <p>{@link Blocks} and {@link RestoreData} hold a Netty buffer and are reference counted; see
 * their javadoc for who releases them.
 */
public sealed interface Message
        permits Hello, HelloOk, ErrorMessage, BackupBegin, BackupReady, Entries, Need, Blocks, Commit,
        Committed, Abort, ListSnapshots, SnapshotList, Restore, RestoreInfo, RestoreData, RestoreEnd,
        RunReport, RunRecorded, Register, Registered, Heartbeat, HeartbeatAck,
        DedupLookup, DedupAnswer, DedupRecord, DedupForget, DedupControl, DedupDone, DedupFailed,
        DedupProbe, DedupCandidates,
        GcProtect, GcProtected, GcGuardFailed, GcSessionEnd,
        DataStoreRequest, DataStored, DataSync, DataSynced, DataRead, DataReadAnswer, DataFailed, DataRepair, CountsCheck, CountsChecked,
        GcDelta, GcDeltaApplied, GcDeltaFailed, GcSweep, GcSwept, GcSweepFailed, TakeoverRecords, TakeoverRecordsPart,
        SealedLogsPush, SealedLogsRecorded,
        StaleMarks, StaleMarksTaken {

    /** The frame type this message travels as. */
    MessageType type();
}
