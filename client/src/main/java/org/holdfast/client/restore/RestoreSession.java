package org.holdfast.client.restore;

import io.netty.util.ReferenceCountUtil;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;
import org.holdfast.client.net.ServerConnection;
import org.holdfast.client.progress.ProgressMeter;
import org.holdfast.common.compress.BlockCodec;
import org.holdfast.common.compress.CorruptPayloadException;
import org.holdfast.common.hash.BlockHasher;
import org.holdfast.common.id.Fingerprint;
import org.holdfast.common.protocol.ListSnapshots;
import org.holdfast.common.protocol.Message;
import org.holdfast.common.protocol.PayloadCodec;
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
 * as it was (for regular files).
 */
public final class RestoreSession {
    static final Duration FRAME_TIMEOUT = Duration.ofMinutes(10);

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
            long seq = Long.parseLong(snapshot);
            if (seq >= 1) {
                return seq;
            }
        } catch (NumberFormatException ignored) {
            // reported below
        }
        throw new AgentException(ExitCode.USAGE, "invalid --snapshot '" + snapshot + "'",
                "give a snapshot id from 'holdfast-agent snapshots' or 'latest'");
    }

    /** Restores {@code sequence} of {@code volume} into {@code target}. */
    public static RestoreResult run(ServerConnection conn, String volume, long sequence, Path target, ProgressMeter progress) {
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
        long zeroBlocks = 0;
        long received = 0;
        byte[] payload = new byte[ProtocolLimits.maxZstdPayload(bs)];
        byte[] block = new byte[bs];
        byte[] digest = new byte[Fingerprint.BYTES];
        BlockHasher hasher = new BlockHasher();
        try (RestoreWriter writer = RestoreWriter.open(target, info.volumeBytes(), bs);
             BlockCodec codec = new BlockCodec()) {
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
                    ReferenceCountUtil.release(m);
                    throw conn.protocolViolation("unexpected " + m.type() + " during a restore");
                }
                try {
                    if (d.startLbn() != next || next + d.count() > info.blockCount()) {
                        throw conn.protocolViolation("RESTORE_DATA for " + d.startLbn() + "+" + d.count()
                                + ", expected LBN " + next + " of " + info.blockCount());
                    }
                    for (int i = 0; i < d.count(); i++) {
                        long lbn = next + i;
                        int c = d.codec(i);
                        if (c == PayloadCodec.ZERO) {
                            writer.zero(lbn);
                            zeroBlocks++;
                            continue;
                        }
                        int len = d.copyPayload(i, payload, 0);
                        received += len;
                        try {
                            codec.decode(c, payload, 0, len, block, 0, bs);
                        } catch (CorruptPayloadException e) {
                            throw integrity(volume, sequence, lbn, e.getMessage(), writer.isFile());
                        }
                        if (!matches(hasher, block, bs, d.fingerprints(), i * Fingerprint.BYTES, digest)) {
                            throw integrity(volume, sequence, lbn, "its SHA-256 does not match its fingerprint", writer.isFile());
                        }
                        writer.write(lbn, block, 0);
                    }
                    next += d.count();
                    progress.advance((long) d.count() * bs);
                } finally {
                    d.release();
                }
            }
            writer.finish();
            progress.finish();
            return new RestoreResult(volume, sequence, target.toString(), info.volumeBytes(), bs, info.blockCount(),
                    zeroBlocks, received, writer.bytesWritten(), (System.nanoTime() - t0) / 1e9);
        }
    }

    private static boolean matches(BlockHasher hasher, byte[] block, int bs, byte[] fps, int off, byte[] digest) {
        hasher.sha256(block, 0, bs, digest, 0);
        if (Arrays.equals(digest, 0, Fingerprint.BYTES, fps, off, off + Fingerprint.BYTES)) {
            return true;
        }
        // A zero block sent with a payload carries the all-zero fingerprint, which no SHA-256 matches.
        boolean zeroFp = Arrays.mismatch(fps, off, off + Fingerprint.BYTES, new byte[Fingerprint.BYTES], 0, Fingerprint.BYTES) < 0;
        return zeroFp && org.holdfast.common.hash.ZeroBlocks.isZero(block, 0, bs);
    }

    private static AgentException integrity(String volume, long sequence, long lbn, String why, boolean file) {
        return new AgentException(ExitCode.INTEGRITY, "block " + lbn + " of " + volume + "@" + sequence
                + " failed verification: " + why + (file ? "; the target file was left as it was"
                        : "; the target device holds a partial restore"),
                "run the server's checker (fsck) on this snapshot and report it");
    }
}
