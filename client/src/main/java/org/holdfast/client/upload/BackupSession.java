package org.holdfast.client.upload;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;
import org.holdfast.client.net.FrameBuffers;
import org.holdfast.client.net.ServerConnection;
import org.holdfast.client.progress.ProgressMeter;
import org.holdfast.client.scan.BackupSource;
import org.holdfast.client.scan.BlockReader;
import org.holdfast.client.scan.ChangeDetector;
import org.holdfast.client.scan.ChangeHash;
import org.holdfast.client.scan.ChangeHashPolicy;
import org.holdfast.client.scan.ChangedBlockList;
import org.holdfast.client.scan.DataRegions;
import org.holdfast.client.scan.StateFile;
import org.holdfast.client.scan.VolumeScanner;
import org.holdfast.client.scan.VolumeSource;
import org.holdfast.common.hash.PossessionProof;
import org.holdfast.common.model.Consistency;
import org.holdfast.common.protocol.Abort;
import org.holdfast.common.protocol.BackupBegin;
import org.holdfast.common.protocol.BackupMode;
import org.holdfast.common.protocol.FullReason;
import org.holdfast.common.protocol.BackupReady;
import org.holdfast.common.protocol.Commit;
import org.holdfast.common.protocol.Committed;
import org.holdfast.common.protocol.ProtocolLimits;

/**
 * One backup, as docs/protocol.md describes it: decide whether the state file can be trusted,
 * BACKUP_BEGIN with its sequence (and, protocol 5, its snapshot identity) as base, then scan and upload in one pass, COMMIT, and only after
 * COMMITTED replace the state file.
 *
 * <p>Incremental means: the state file is intact and matches the volume's size and block size,
 * the server answered mode INCREMENTAL, and its parent is the state's snapshot. In every other
 * case the agent reads everything and reports every LBN (full), which is always correct.
 */
public final class BackupSession {
    /** The default raw size of a compressed frame (see docs/benchmarks.md, "Compressed frame size"). */
    public static final int DEFAULT_FRAME_SIZE = 256 * 1024;
    /** The smallest {@code --frame-size}. */
    public static final int MIN_FRAME_SIZE = 64 * 1024;
    /** The largest {@code --frame-size}: a frame holds at most 1 MiB of blocks. */
    public static final int MAX_FRAME_SIZE = org.holdfast.common.protocol.ProtocolLimits.FRAME_MAX_RAW;

    /** Wait for the server's answer to BACKUP_BEGIN and COMMIT. */
    static final Duration ANSWER_TIMEOUT = Duration.ofMinutes(10);

    /**
     * Everything a backup needs to know. {@code blockSize} 0 = the state's, else 4096.
     * {@code readHoles} reads holes like data instead of asking the file system where they are;
     * {@code changeHash} says how changed blocks are found.
     */
    public record Settings(String volume, Path source, int blockSize, Path changedBlocks, Path stateFile,
                           long windowBytes, int hashThreads, int compressThreads, int compressLevel, boolean readHoles,
                           Consistency consistency, int frameSize, ChangeHashPolicy changeHash) {
        /** Settings with the default change detection. */
        public Settings(String volume, Path source, int blockSize, Path changedBlocks, Path stateFile,
                        long windowBytes, int hashThreads, int compressThreads, int compressLevel, boolean readHoles,
                        Consistency consistency, int frameSize) {
            this(volume, source, blockSize, changedBlocks, stateFile, windowBytes, hashThreads, compressThreads, compressLevel,
                    readHoles, consistency, frameSize, ChangeHashPolicy.DEFAULT);
        }

        /** Settings with the default compressed-frame size. */
        public Settings(String volume, Path source, int blockSize, Path changedBlocks, Path stateFile,
                        long windowBytes, int hashThreads, int compressThreads, int compressLevel, boolean readHoles,
                        Consistency consistency) {
            this(volume, source, blockSize, changedBlocks, stateFile, windowBytes, hashThreads, compressThreads, compressLevel,
                    readHoles, consistency, DEFAULT_FRAME_SIZE);
        }

        /** Settings for a crash-consistent backup (no hook made the source consistent). */
        public Settings(String volume, Path source, int blockSize, Path changedBlocks, Path stateFile,
                        long windowBytes, int hashThreads, int compressThreads, int compressLevel, boolean readHoles) {
            this(volume, source, blockSize, changedBlocks, stateFile, windowBytes, hashThreads, compressThreads, compressLevel,
                    readHoles, Consistency.CRASH);
        }
    }

    /**
     * The consistency the snapshot is recorded with: what the settings say, or {@code UNKNOWN} with a
     * server of protocol version 2 (its COMMIT has no room for it).
     */
    public static Consistency recorded(Consistency wanted, int protocolVersion) {
        return protocolVersion >= 3 ? wanted : Consistency.UNKNOWN;
    }

    private final Settings settings;
    private final Consumer<String> notices;
    private final Supplier<BackupSource> opener;
    /** Whether COMMIT went out: after that, a lost connection leaves the snapshot's fate unknown. */
    private volatile boolean commitSent;

    /** {@code notices} receives one-line remarks for the user (why a backup is full, and such). */
    public BackupSession(Settings settings, Consumer<String> notices) {
        this(settings, notices, () -> VolumeSource.open(settings.source()));
    }

    /** Like the constructor above, reading the volume from what {@code opener} opens (a qcow2 image, say). */
    public BackupSession(Settings settings, Consumer<String> notices, Supplier<BackupSource> opener) {
        this.settings = settings;
        this.notices = notices;
        this.opener = opener;
    }

    /** Runs the backup over {@code conn} (after HELLO). */
    public BackupResult run(ServerConnection conn, ProgressMeter progress) {
        long t0 = System.nanoTime();
        StateFile.Writer.removeLeftovers(settings.stateFile(), settings.volume(), notices);
        try (BackupSource source = opener.get()) {
            long volumeBytes = source.size();
            StateFile.Loaded loaded = StateFile.load(settings.stateFile());
            StateFile.PreviousState prev = loaded.state();
            try {
                // neither --block-size nor a state file: the server says (the volume's, if it was created over REST)
                boolean serverChooses = settings.blockSize() == 0 && prev == null;
                int blockSize = settings.blockSize() != 0 ? settings.blockSize() : prev != null ? prev.blockSize() : 4096;
                if (!ProtocolLimits.isValidBlockSize(blockSize)) {
                    throw new AgentException(ExitCode.USAGE, "block size " + blockSize + " is not a power of two in "
                            + ProtocolLimits.MIN_BLOCK_SIZE + ".." + ProtocolLimits.MAX_BLOCK_SIZE, "fix --block-size");
                }
                String distrust = loaded.reason();
                if (prev != null && prev.blockSize() != blockSize) {
                    distrust = "state file is for block size " + prev.blockSize() + ", not " + blockSize;
                } else if (prev != null && prev.volumeBytes() != volumeBytes) {
                    distrust = FullBackupReasons.sizeChanged(prev.volumeBytes(), volumeBytes);
                }
                long base = distrust == null ? prev.sequence() : 0;
                // the base's identity lets the server tell it from another snapshot of the same sequence (protocol 5)
                long baseId = distrust == null && conn.protocolVersion() >= BackupBegin.SNAPSHOT_ID_SINCE_VERSION ? prev.snapshotId() : 0;

                conn.send(new BackupBegin(settings.volume(), serverChooses ? 0 : blockSize, volumeBytes, base, baseId));
                BackupReady ready = conn.expect(BackupReady.class, ANSWER_TIMEOUT);
                if (serverChooses && ProtocolLimits.isValidBlockSize(ready.blockSize())) {
                    blockSize = ready.blockSize();
                } else if (ready.blockSize() != blockSize) {
                    throw conn.protocolViolation("BACKUP_READY block size " + ready.blockSize() + " for requested " + blockSize);
                }
                String fullReason = distrust;
                if (fullReason == null && ready.parentSequence() != base) {
                    fullReason = FullBackupReasons.parentDiffers(settings.volume(), ready.parentSequence(), base);
                } else if (fullReason == null && ready.fullReason() == FullReason.IDENTITY_MISMATCH) {
                    // said by a protocol 5 server
                    fullReason = "the server asked for a full backup: its newest snapshot " + settings.volume() + "@" + base
                            + " is not the one the state file describes (same sequence, another identity: the server's catalog"
                            + " was restored from a backup, or another agent backed this volume up)";
                } else if (fullReason == null && ready.mode() != BackupMode.INCREMENTAL) {
                    // the base is the server's newest snapshot with the same identity (a protocol 5 server said
                    // IDENTITY_MISMATCH otherwise): it answers full only when that one references damaged blocks
                    fullReason = "the server asked for a full backup: its newest snapshot " + settings.volume() + "@" + base
                            + " references damaged blocks, and a full backup re-reads the volume and repairs them";
                }
                boolean incremental = fullReason == null;
                ParentSize parentSize = ParentSize.of(prev, ready.parentSequence());
                long blockCount = ProtocolLimits.blockCount(volumeBytes, blockSize);
                ChangedBlockList extents = ChangedBlockList.all(blockCount);
                if (settings.changedBlocks() != null) {
                    ChangedBlockList listed = ChangedBlockList.read(settings.changedBlocks(), volumeBytes, blockSize);
                    if (incremental) {
                        extents = listed;
                    } else {
                        notices.accept("ignoring --changed-blocks and reading the whole volume: " + fullReason);
                    }
                } else {
                    ChangedBlockList tracked = source.trackedChanges(incremental ? prev.sequence() : 0, volumeBytes, blockSize);
                    if (tracked != null) {
                        extents = tracked;
                    } else if (!incremental && (prev != null || Files.exists(settings.stateFile()))) {
                        // a state file that is there but not trusted (corrupt, foreign) is said, and replaced at commit
                        notices.accept("reading the whole volume (full backup): " + fullReason);
                    } else if (!incremental && ready.parentSequence() > 0) {
                        // no state file, but the volume has snapshots: a wiped --state-dir or another machine; a
                        // first backup of a new volume stays quiet
                        notices.accept("reading the whole volume (full backup): " + fullReason + " (" + settings.stateFile()
                                + "); the server's newest snapshot is " + settings.volume() + "@" + ready.parentSequence());
                    }
                }
                progress.start(extents.blocks() * (long) blockSize);
                try {
                    return upload(conn, source, prev, incremental, fullReason, blockSize, blockCount, extents, ready,
                            progress, t0, parentSize);
                } catch (AgentException e) {
                    AgentException why = e.exitCode() == ExitCode.NETWORK ? serverReason(conn, e) : e;
                    // no ERROR said why and the connection is gone: say what that means, not the socket's words
                    throw why.exitCode() == ExitCode.NETWORK && !conn.isActive()
                            ? ConnectionLoss.of(conn.address().toString(), commitSent, why) : why;
                }
            } finally {
                if (prev != null) {
                    prev.close();
                }
            }
        }
    }

    private BackupResult upload(ServerConnection conn, BackupSource source, StateFile.PreviousState prev,
                                boolean incremental, String fullReason, int blockSize, long blockCount,
                                ChangedBlockList extents, BackupReady ready, ProgressMeter progress, long t0,
                                ParentSize parentSize) {
        SessionFailure failure = new SessionFailure();
        PayloadWindow window = new PayloadWindow(settings.windowBytes(), blockSize);
        ConcurrentLinkedQueue<PendingRun> pending = new ConcurrentLinkedQueue<>();
        Semaphore runsInFlight = new Semaphore(256);
        // full: every non-zero block is sent, so the reading threads tag them all; incremental: only
        // the changed ones need a tag, computed by the assembler (see RunAssembler)
        byte[] secret = ready.possessionSecret();
        RunAssembler runs = new RunAssembler(conn, window, pending, runsInFlight, failure, blockSize,
                incremental ? new PossessionProof(secret) : null);
        boolean committed = false;
        ChangePlan plan = planChangeHashing(prev, incremental);
        try (StateFile.Writer state = StateFile.Writer.create(settings.stateFile(), blockSize, source.size(), plan.next());
             BlockUploader uploader = new BlockUploader(conn, window, pending, runsInFlight, failure, blockSize,
                     settings.compressThreads(), settings.compressLevel(), settings.frameSize());
             DataRegions regions = source.regions(settings.readHoles());
             BlockReader reader = new BlockReader(source::read, source.size(), blockSize, extents,
                     BlockReader.DEFAULT_CHUNK_BYTES, BlockReader.DEFAULT_SLOTS, settings.hashThreads(), regions,
                     incremental ? null : secret, plan.hashing())) {
            VolumeScanner.Result scan;
            try {
                scan = VolumeScanner.scan(reader, new ChangeDetector(incremental ? prev : null), incremental ? prev : null,
                        state, blockCount, blockSize, runs, progress::advance);
                runs.finish();
                while (!pending.isEmpty() || !window.allReturned()) {
                    failure.check();
                    Thread.sleep(5);
                }
                failure.check();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AgentException(ExitCode.INTERNAL, "interrupted", null, e);
            }
            commitSent = true;
            conn.send(new Commit(source.size(), recorded(settings.consistency(), conn.protocolVersion())));
            Committed c = awaitCommitted(uploader, failure);
            committed = true;
            progress.finish();
            boolean saved = saveState(state, c);
            source.committed(c.sequence());
            BackupResult.SizeChange sizeChange = parentSize.compare(conn, settings.volume(), source.size(), notices);
            if (sizeChange != null) {
                notices.accept(sizeChange.warning(settings.volume(), settings.source(), c.sequence()));
            }
            double seconds = (System.nanoTime() - t0) / 1e9;
            return new BackupResult(settings.volume(), c.sequence(), c.createdAtMillis(), incremental ? "incremental" : "full",
                    fullReason, source.size(), blockSize, c.logicalBytes(), scan.blocksRead(), scan.bytesRead(),
                    runs.entriesSent(), c.changedBlocks(), uploader.sentBlocks.sum(), uploader.sentBytes.sum(),
                    c.newBlocks(), c.storedBytes(), seconds, saved, scan.sourceBytesRead(), scan.holeBytes(), uploader.framedBlocks.sum(),
                    settings.changeHash().cheap() ? "xxh128" : "sha256", plan.rehashReason(), scan.sha256Blocks(), sizeChange);
        } finally {
            if (!committed) {
                runs.discard();
                if (conn.isActive()) {
                    conn.send(Abort.INSTANCE);
                }
            }
        }
    }

    /**
     * How this backup uses cheap change hashes: what the reader computes and may keep ({@code hashing},
     * null for SHA-256 only), the change-hash fields of the new state ({@code next}, null: format 1),
     * and why every block read gets its SHA-256 ({@code rehashReason}, null when unchanged cheap hashes
     * keep their stored SHA-256).
     */
    private record ChangePlan(BlockReader.ChangeHashing hashing, StateFile.ChangeHashes next, String rehashReason) {
    }

    private ChangePlan planChangeHashing(StateFile.PreviousState prev, boolean incremental) {
        ChangeHashPolicy policy = settings.changeHash();
        long now = System.currentTimeMillis();
        String why = incremental ? policy.rehashReason(prev, now) : "full backup";
        if (!policy.cheap()) {
            return new ChangePlan(null, null, why);
        }
        // the seed stays with the volume's state: LBNs outside a changed-blocks list keep their old hashes
        boolean keepSeed = incremental && prev.hasChangeHashes();
        ChangeHash hash = keepSeed ? new ChangeHash(prev.changeHashes().seed()) : ChangeHash.withRandomSeed();
        if (why == null) {
            return new ChangePlan(new BlockReader.ChangeHashing(hash, prev.cursor()),
                    new StateFile.ChangeHashes(hash.seed(), prev.backupsSinceRehash() + 1, prev.rehashedAtMillis()), null);
        }
        return new ChangePlan(new BlockReader.ChangeHashing(hash, null), new StateFile.ChangeHashes(hash.seed(), 0, now), why);
    }

    /**
     * A broken connection is often the server hanging up right after an ERROR that says why; the
     * upload threads have stopped reading by then, so look for that ERROR before blaming the network.
     */
    private static AgentException serverReason(ServerConnection conn, AgentException network) {
        long deadline = System.nanoTime() + 1_000_000_000L;
        try {
            while (System.nanoTime() < deadline) {
                FrameBuffers.release(conn.poll(Duration.ofMillis(100)));
            }
        } catch (AgentException e) {
            if (e.exitCode() != ExitCode.NETWORK) {
                return e;
            }
        }
        return network;
    }

    private Committed awaitCommitted(BlockUploader uploader, SessionFailure failure) {
        try {
            return uploader.committed().get(ANSWER_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            failure.check();
            throw new AgentException(ExitCode.INTERNAL, "commit failed: " + e.getCause(), null, e.getCause());
        } catch (TimeoutException e) {
            throw new AgentException(ExitCode.NETWORK, "the server did not confirm the commit within "
                    + ANSWER_TIMEOUT.toMinutes() + " minutes", "check the server; the snapshot may or may not exist (list snapshots)");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AgentException(ExitCode.INTERNAL, "interrupted", null, e);
        }
    }

    private boolean saveState(StateFile.Writer state, Committed c) {
        try {
            state.commit(c.sequence(), c.createdAtMillis(), c.snapshotId());
            return true;
        } catch (RuntimeException e) {
            // The snapshot is committed; a missing state only makes the next backup read everything.
            notices.accept("snapshot " + c.sequence() + " is committed, but the state file could not be saved ("
                    + e.getMessage() + "); the next backup will read the whole volume");
            return false;
        }
    }
}
