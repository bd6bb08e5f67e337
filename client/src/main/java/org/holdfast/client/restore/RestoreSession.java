package org.holdfast.client.restore;

import java.nio.file.Path;
import java.time.Duration;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;
import org.holdfast.client.net.FrameBuffers;
import org.holdfast.client.net.ServerConnection;
import org.holdfast.client.progress.ProgressMeter;
import org.holdfast.common.id.SnapshotId;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.protocol.ListSnapshots;
import org.holdfast.common.protocol.Message;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.common.protocol.Restore;
import org.holdfast.common.protocol.RestoreData;
import org.holdfast.common.protocol.RestoreEnd;
import org.holdfast.common.protocol.RestoreInfo;
import org.holdfast.common.protocol.SnapshotInfo;
import org.holdfast.common.protocol.SnapshotList;

/**
 * One restore: RESTORE, RESTORE_INFO, RESTORE_DATA frames in LBN order, RESTORE_END. Every payload
 * is decoded within the block size and its SHA-256 checked against the fingerprint beside it
 * before it is written; any mismatch, gap or short stream aborts the restore and leaves the target
 * as it was (for regular files). This thread receives and checks the frames' order; a
 * {@link RestorePipeline} decodes, verifies and writes them on every core.
 */
public final class RestoreSession {
    static final Duration FRAME_TIMEOUT = Duration.ofMinutes(10);
    /** Decoded bytes per unit of work: large enough for cheap writes, small enough to keep every worker busy. */
    static final int PIECE_BYTES = 1 << 20;

    private RestoreSession() {
    }

    /** Resolves {@code snapshot} ("latest" or a sequence number) to a sequence. */
    public static long resolve(ServerConnection conn, String volume, String snapshot) {
        if ("latest".equalsIgnoreCase(snapshot)) {
            conn.send(new ListSnapshots(volume));
            SnapshotList list = conn.expect(SnapshotList.class, FRAME_TIMEOUT);
            return list.snapshots().stream().mapToLong(SnapshotInfo::sequence).max()
                    .orElseThrow(() -> new AgentException(ExitCode.REJECTED, "volume " + volume + " has no snapshots",
                            "back it up first"));
        }
        try {
            return SnapshotId.parse(snapshot, new VolumeId(volume)).sequence();
        } catch (IllegalArgumentException e) {
            throw new AgentException(ExitCode.USAGE, "invalid --snapshot '" + snapshot + "': " + e.getMessage(),
                    "give a snapshot id from 'holdfast-agent snapshots' (volume@sequence, or the sequence alone) or 'latest'");
        }
    }

    /**
     * Restores {@code sequence} of {@code volume} into {@code target}; an existing non-empty file or
     * a device only with {@code force} (see {@link RestoreWriter#checkOverwrite}).
     */
    public static RestoreResult run(ServerConnection conn, String volume, long sequence, Path target, boolean force,
                                    ProgressMeter progress) {
        long t0 = System.nanoTime();
        conn.send(new Restore(volume, sequence, 0));
        RestoreInfo info = conn.expect(RestoreInfo.class, FRAME_TIMEOUT);
        int bs = info.blockSize();
        if (!ProtocolLimits.isValidBlockSize(bs) || info.volumeBytes() < 0
                || info.blockCount() != ProtocolLimits.blockCount(info.volumeBytes(), bs) || info.sequence() != sequence) {
            throw conn.protocolViolation("RESTORE_INFO " + info + " is inconsistent for snapshot " + sequence);
        }
        conn.blockSize(bs);
        progress.start(info.volumeBytes());
        long next = 0;
        long received = 0;
        long zeroBlocks;
        try (RestoreWriter writer = RestoreWriter.open(target, info.volumeBytes(), bs, force)) {
            try (RestorePipeline pipeline = new RestorePipeline(writer, bs, RestorePipeline.defaultThreads(),
                    Math.max(1, PIECE_BYTES / bs))) {
                try {
                    while (true) {
                        Message m = conn.receive(FRAME_TIMEOUT);
                        if (m instanceof RestoreEnd end) {
                            if (next != info.blockCount() || end.blocksSent() != info.blockCount()) {
                                throw conn.protocolViolation("restore stream ended after " + next + " of " + info.blockCount()
                                        + " blocks (server counted " + end.blocksSent() + ")");
                            }
                            break;
                        }
                        if (!(m instanceof RestoreData d)) {
                            FrameBuffers.release(m);
                            throw conn.protocolViolation("unexpected " + m.type() + " during a restore");
                        }
                        if (d.startLbn() != next || next + d.count() > info.blockCount()) {
                            d.release();
                            throw conn.protocolViolation("RESTORE_DATA for " + d.startLbn() + "+" + d.count()
                                    + ", expected LBN " + next + " of " + info.blockCount());
                        }
                        next += d.count();
                        received += d.payloadBytes();
                        int count = d.count();
                        pipeline.submit(d); // takes the reference
                        progress.advance((long) count * bs);
                    }
                    zeroBlocks = pipeline.finish();
                } catch (BlockMismatchException e) {
                    throw integrity(volume, sequence, e.lbn(), e.why(), writer.isFile());
                }
            }
            writer.finish();
            progress.finish();
            return new RestoreResult(volume, sequence, target.toString(), info.volumeBytes(), bs, info.blockCount(),
                    zeroBlocks, received, writer.bytesWritten(), (System.nanoTime() - t0) / 1e9);
        }
    }

    private static AgentException integrity(String volume, long sequence, long lbn, String why, boolean file) {
        return new AgentException(ExitCode.INTEGRITY, "block " + lbn + " of " + volume + "@" + sequence
                + " failed verification: " + why + (file ? "; the target file was left as it was"
                        : "; the target device holds a partial restore"),
                "run the server's checker (fsck) on this snapshot and report it");
    }
}
