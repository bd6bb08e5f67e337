package org.holdfast.server.ingest;

import java.security.SecureRandom;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.holdfast.common.concurrent.Futures;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.protocol.BackupBegin;
import org.holdfast.common.protocol.BackupReady;
import org.holdfast.common.protocol.Blocks;
import org.holdfast.common.protocol.Commit;
import org.holdfast.common.protocol.Committed;
import org.holdfast.common.protocol.Entries;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.Message;
import org.holdfast.common.protocol.ProtocolException;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.server.catalog.VolumeRecord;

/**
 * The backup running on one agent connection, at most one at a time: BACKUP_BEGIN's checks (block
 * size, volume size, the volume's lock, admission, space) and its {@link BackupSession}, the
 * session's frames, then COMMIT or abandonment and what each end leaves behind through
 * {@link BackupOutcomes}. Lane only.
 */
final class ConnectionBackup {
    /** Block size of a new volume whose first BACKUP_BEGIN leaves it to the server (0). */
    static final int DEFAULT_BLOCK_SIZE = 4096;
    private static final SecureRandom SECRETS = new SecureRandom();

    private final IngestServer server;
    private final AgentAccess access;
    private final BackupOutcomes outcomes;
    private final Supplier<String> remoteAddress;
    private final Runnable onEnd;
    private BackupSession session;
    // payload bytes received in the running backup
    private long sessionBytes;
    // the running backup as the list of running backups shows it
    private RunningBackups.Progress progress;

    /** {@code onEnd}: run on the lane when a session ends, committed or not (the connection stops digesting BLOCKS). */
    ConnectionBackup(IngestServer server, AgentAccess access, Supplier<String> remoteAddress, Runnable onEnd) {
        this.server = server;
        this.access = access;
        this.outcomes = new BackupOutcomes(server, access);
        this.remoteAddress = remoteAddress;
        this.onEnd = onEnd;
    }

    /** True while a backup runs on this connection. */
    boolean running() {
        return session != null;
    }

    /**
     * Starts the backup BACKUP_BEGIN asks for, or refuses it (recorded, see {@link BackupOutcomes#refusedAtBegin})
     * with nothing held. Returns the BACKUP_READY for the agent, which the caller sends only once the
     * decoder knows the block size.
     */
    BackupReady begin(BackupBegin b, VolumeId volume, String agentName, int protocolVersion) {
        // block size 0: the volume's (set when it was created over REST or by its first backup), 4096 for a new one
        if (b.blockSize() != 0 && !ProtocolLimits.isValidBlockSize(b.blockSize())) {
            throw new ProtocolException(ErrorCode.BAD_FRAME, "block size " + b.blockSize() + " is not a power of two in "
                    + ProtocolLimits.MIN_BLOCK_SIZE + ".." + ProtocolLimits.MAX_BLOCK_SIZE + " (or 0 for the volume's)");
        }
        if (b.volumeBytes() < 0 || b.baseSequence() < 0) {
            throw new ProtocolException(ErrorCode.BAD_FRAME, "negative volume size or base sequence");
        }
        try {
            checkVolumeSize(volume, b.volumeBytes());
        } catch (ProtocolException e) {
            outcomes.refusedAtBegin(volume, e, true);
            throw e;
        }
        long sessionId = server.nextSessionId();
        BackupReady ready;
        int blockSize;
        if (!server.volumeLocks().tryLock(volume.name(), sessionId)) {
            ProtocolException busy = new ProtocolException(ErrorCode.VOLUME_BUSY, "volume '" + volume
                    + "' has a backup in progress; one backup per volume at a time");
            outcomes.refusedAtBegin(volume, busy, false); // the volume's result is the running backup's to record
            throw busy;
        }
        var principal = access.principal();
        try {
            VolumeRecord existing = server.services().catalog().volume(volume).orElse(null);
            blockSize = b.blockSize() != 0 ? b.blockSize() : existing != null ? existing.blockSize() : DEFAULT_BLOCK_SIZE;
            if (existing != null && existing.blockSize() != blockSize) {
                throw new ProtocolException(ErrorCode.BLOCK_SIZE_MISMATCH, "volume '" + volume + "' has block size "
                        + existing.blockSize() + ", the agent sent " + blockSize + "; back it up with that block size (agent:"
                        + " --block-size " + existing.blockSize() + ", or leave the option out to use the volume's)");
            }
            if (existing == null && !VolumeRecord.isValidDomain(principal.domain())) {
                throw new ProtocolException(ErrorCode.UNAUTHORIZED, "this token names the dedup domain '" + principal.domain()
                        + "', which is not a valid domain name; ask an admin for a corrected token");
            }
            if (existing != null && b.baseSequence() > existing.latestSequence()) {
                // the agent's state is ahead (snapshots lost with a catalog restore): their ids stay taken even if this backup fails
                server.services().snapshotCommit().raiseFloor(volume, b.baseSequence());
            }
            server.services().admission().admit(volume, existing, b.volumeBytes());
            server.services().dataStore().checkSpace();
            byte[] secret = new byte[BackupReady.SECRET_BYTES];
            SECRETS.nextBytes(secret);
            session = new BackupSession(sessionId, volume, blockSize, b.volumeBytes(), existing, server.services(),
                    server.settings().segmentMaxEntries(), b.baseSequence(), b.baseSnapshotId(), secret, principal.domain(),
                    server.settings().spill());
            // an agent before protocol 5 reads no reason (its decoder would refuse the trailing byte)
            ready = new BackupReady(sessionId, session.parentSequence(), blockSize, session.mode(), secret, session.fullReason())
                    .forVersion(protocolVersion);
        } catch (RuntimeException e) {
            server.volumeLocks().unlock(volume.name(), sessionId);
            outcomes.refusedAtBegin(volume, e, true);
            throw e;
        }
        server.stats().sessions.incrementAndGet();
        sessionBytes = 0;
        progress = server.runningBackups().begin(sessionId, volume.name(), principal.name(), agentName, remoteAddress.get(), blockSize,
                b.volumeBytes(), session.parentSequence());
        return ready;
    }

    /** ENTRIES: the session's answer (NEEDs), which the caller writes unflushed. */
    Message entries(Entries e) {
        Message needs = requireSession(e).onEntries(e);
        progress.entries(e.startLbn() + e.count(), e.count());
        return needs;
    }

    /** BLOCKS whose payloads the lane decodes and hashes itself. */
    void blocks(Blocks b) {
        long bytes = payloadBytes(b, b.data().readableBytes());
        requireSession(b).onBlocks(b);
        received(b, bytes);
    }

    /** BLOCKS whose payloads the digest pool decodes and hashes ({@code digests}). */
    void blocks(Blocks b, CompletableFuture<PayloadDigester.FrameDigests> digests) {
        requireSession(b).onBlocks(b, Futures.join(digests));
        received(b, payloadBytes(b, b.data().readableBytes()));
    }

    /** COMMIT: the snapshot is committed and the session ends; returns COMMITTED as {@code protocolVersion} reads it. */
    Committed commit(Commit c, int protocolVersion) {
        BackupSession s = requireSession(c);
        checkVolumeSize(s.volume(), c.volumeBytes());
        Committed done = s.onCommit(c.volumeBytes(), c.consistency());
        server.stats().unprovenMatches.addAndGet(s.unprovenMatches());
        long bytes = sessionBytes;
        outcomes.ended(s.volume(), true, "snapshot " + done.sequence() + ": "
                + done.newBlocks() + " new blocks, " + done.storedBytes() + " bytes stored", bytes);
        endSession();
        outcomes.committed(s.volume(), done.sequence());
        server.stats().commits.incrementAndGet();
        access.audit("snapshot.commit", "volume:" + s.volume() + "@" + done.sequence(), "ok",
                done.newBlocks() + " new blocks, " + s.unprovenMatches() + " unproven matches asked for");
        // an agent before protocol 5 reads no snapshot id (its decoder would refuse the trailing bytes)
        return done.forVersion(protocolVersion);
    }

    /** ABORT: the running backup (if any) is abandoned at the agent's request. */
    void abort() {
        if (session != null) {
            BackupSession s = session;
            long bytes = sessionBytes;
            session.abandon();
            endSession();
            outcomes.ended(s.volume(), false, "aborted by the agent", bytes);
            outcomes.failed(s.volume(), "aborted by the agent before COMMIT");
        }
    }

    /** Abandons a backup in progress (if any), recording {@code why} as the volume's last backup result. */
    void abandon(String why) {
        if (session != null) {
            BackupSession s = session;
            long bytes = sessionBytes;
            try {
                s.abandon();
            } finally {
                endSession();
                outcomes.ended(s.volume(), false, why, bytes);
                outcomes.failed(s.volume(), why);
            }
        }
    }

    /** The block payloads of a BLOCKS frame whose body data has {@code dataBytes}: without each block's header. */
    private static long payloadBytes(Blocks b, long dataBytes) {
        return dataBytes - (long) b.count() * Blocks.BLOCK_HEADER_BYTES;
    }

    /** Counts a BLOCKS frame's payload bytes for the running backup and the transfer rates. */
    private void received(Blocks b, long bytes) {
        sessionBytes += bytes;
        progress.blocks(b.count(), bytes);
        String volume = session.volume().name();
        server.observe(o -> o.received(volume, bytes));
    }

    /** Refuses (LIMIT_EXCEEDED) a volume size over holdfast.ingest.max-volume-size, before anything is stored. */
    private void checkVolumeSize(VolumeId volume, long volumeBytes) {
        long max = server.settings().limits().maxVolumeBytes();
        if (volumeBytes > max) {
            throw new ProtocolException(ErrorCode.LIMIT_EXCEEDED, "volume '" + volume + "' would be "
                    + Long.toUnsignedString(volumeBytes) + " bytes, over this server's maximum volume size of " + max
                    + " bytes (holdfast.ingest.max-volume-size); nothing was stored. Check the size the agent reads"
                    + " for the device, or ask an operator to raise the maximum");
        }
    }

    private BackupSession requireSession(Message m) {
        if (session == null) {
            throw new ProtocolException(ErrorCode.BAD_STATE, m.type() + " outside a backup (send BACKUP_BEGIN first)");
        }
        return session;
    }

    private void endSession() {
        if (session != null) {
            server.volumeLocks().unlock(session.volume().name(), session.id());
            server.runningBackups().end(session.id());
            progress = null;
            session = null;
            onEnd.run();
        }
    }
}
