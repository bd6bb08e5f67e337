package org.holdfast.client.cli;

import java.nio.file.Path;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;
import org.holdfast.client.StateDirectory;
import org.holdfast.client.net.ServerConnection;
import org.holdfast.client.progress.Sizes;
import org.holdfast.client.qcow2.Qcow2Backup;
import org.holdfast.client.scan.ChangeHashPolicy;
import org.holdfast.client.scan.FilesystemBlockSize;
import org.holdfast.client.scan.StateFile;
import org.holdfast.client.upload.BackupResult;
import org.holdfast.client.upload.BackupSession;
import org.holdfast.common.compress.BlockCodec;
import org.holdfast.common.model.Consistency;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code backup}: makes a snapshot of a volume, sending only what changed since the last one. */
@Command(name = "backup", mixinStandardHelpOptions = true,
        description = {"Back up an image file or block device as a new snapshot of --volume.",
            "Only blocks changed since this agent's last committed snapshot are sent when",
            "its state file is intact and the server agrees; otherwise the whole volume",
            "is read and every block reported (full backup)."})
final class BackupCommand extends HoldfastAgent.Subcommand implements Callable<Integer> {
    @Mixin
    ConnectionOptions conn;

    @Mixin
    HandoffOptions handoff;

    @Option(names = "--source", paramLabel = "PATH", required = true, description = "Image file or block device to back up.")
    Path source;

    @Option(names = "--block-size", paramLabel = "BYTES", defaultValue = "0",
            description = "Block size for a new volume: a power of two, 512..1048576 (default 4096, or the state file's).")
    int blockSize;

    @Option(names = "--changed-blocks", paramLabel = "FILE",
            description = "Read only these ranges ('START_BYTE LENGTH' per line, # comments); used only for an incremental backup.")
    Path changedBlocks;

    @Option(names = "--state-dir", paramLabel = "DIR",
            description = "Where per-server, per-volume state files live (default: $XDG_STATE_HOME/holdfast/agent-state,"
                    + " else ~/.local/state/holdfast/agent-state).")
    Path stateDir;

    @Option(names = "--format", paramLabel = "FORMAT", defaultValue = "auto",
            description = "raw, qcow2 (back up the guest-visible disk, read through qemu-nbd) or auto (qcow2 if the file says so; default).")
    String format;

    @Option(names = "--dirty-bitmap",
            description = "qcow2: keep a persistent dirty bitmap in the image so the next backup reads only what changed.")
    boolean dirtyBitmap;

    @Option(names = "--threads", paramLabel = "N", defaultValue = "0",
            description = "Threads that read, hash and compress (default 0: one per core).")
    int threads;

    @Option(names = "--read-holes",
            description = "Read holes of a sparse file like data instead of skipping them (they are zero blocks either way).")
    boolean readHoles;

    @Option(names = "--consistency", paramLabel = "KIND", defaultValue = "crash",
            description = {"What the server records about the source: 'crash' (read live, the default) or 'application'",
                "(a freeze, flush or snapshot made it consistent before this backup; the daemon says so when a pre hook succeeded)."})
    String consistency;

    @Option(names = "--frame-size", paramLabel = "BYTES", defaultValue = "" + BackupSession.DEFAULT_FRAME_SIZE,
            description = {"Raw bytes of consecutive changed blocks compressed together as one frame: 65536..1048576",
                "(default 262144; a server before protocol 4 gets one block at a time)."})
    int frameSize;

    @Option(names = "--change-hash", paramLabel = "KIND", defaultValue = "xxh128",
            description = {"How changed blocks are found: 'xxh128' (the default: a cheap hash per block in the state file,",
                "SHA-256 only for blocks whose cheap hash changed, with a periodic full re-hash) or 'sha256' (every block)."})
    String changeHash;

    @Option(names = "--rehash-every", paramLabel = "N", defaultValue = "" + 32,
            description = "With xxh128: every N-th backup computes every block's SHA-256 (default 32; 0: never by count).")
    int rehashEvery;

    @Option(names = "--rehash-days", paramLabel = "DAYS", defaultValue = "" + 7,
            description = "With xxh128: re-hash every block when the last full re-hash is this old (default 7; 0: never by age).")
    int rehashDays;

    @Option(names = "--window-mib", paramLabel = "MIB", defaultValue = "64", hidden = true,
            description = "Memory for payloads waiting for the server's answer.")
    int windowMib;

    @Option(names = "--compress-level", paramLabel = "N", defaultValue = "" + BlockCodec.DEFAULT_LEVEL, hidden = true,
            description = "zstd level for uploads (negative = faster).")
    int level;

    @Override
    public Integer call() {
        return handoff.runInDaemonOrHere(conn, out, err, this::runHere);
    }

    /** The backup in this process. */
    private Integer runHere(Output o) {
        if (threads < 0) {
            throw new AgentException(ExitCode.USAGE,
                    "--threads " + threads + " is negative", "give a number of threads, or 0 for one per core");
        }
        if (frameSize < BackupSession.MIN_FRAME_SIZE || frameSize > BackupSession.MAX_FRAME_SIZE) {
            throw new AgentException(ExitCode.USAGE, "--frame-size " + frameSize + " is outside " + BackupSession.MIN_FRAME_SIZE
                    + ".." + BackupSession.MAX_FRAME_SIZE, "give a size of 64 KiB to 1 MiB in bytes, e.g. 262144, or leave it out");
        }
        Consistency kind = Consistency.fromName(consistency);
        if (kind == null || kind == Consistency.UNKNOWN) {
            throw new AgentException(ExitCode.USAGE, "--consistency " + consistency + " is not a consistency",
                    "give 'crash' (the default) or 'application'");
        }
        ChangeHashPolicy policy = changeHashPolicy();
        int cores = threads > 0 ? threads : Math.max(1, Runtime.getRuntime().availableProcessors());
        String volume = conn.volume();
        Path dir = stateDir != null ? stateDir : StateDirectory.current().resolve(StateDirectory.AGENT_STATE, o::notice);
        Path stateFile = StateFile.path(dir, conn.address().key(), volume);
        BackupSession.Settings s = new BackupSession.Settings(volume, source, blockSize, changedBlocks, stateFile,
                (long) Math.max(8, windowMib) << 20, cores, cores, level, readHoles, kind, frameSize, policy);
        if (dirtyBitmap && changedBlocks != null) {
            throw new AgentException(ExitCode.USAGE, "--dirty-bitmap and --changed-blocks both say what changed",
                    "give one of them");
        }
        Qcow2Backup qcow2 = Qcow2Backup.choose(source, format, dirtyBitmap, stateFile, o::notice);
        BackupResult r;
        Consistency recorded;
        try (ServerConnection c = conn.open(o::notice)) {
            recorded = BackupSession.recorded(kind, c.protocolVersion());
            BackupSession session = qcow2 == null ? new BackupSession(s, o::notice) : new BackupSession(s, o::notice, qcow2::open);
            r = session.run(c, o.progress("backup " + volume));
        }
        if (recorded != kind) {
            o.notice("the server speaks protocol version 2: it records the snapshot's consistency as unknown");
        }
        if (qcow2 == null && r.mode().equals("full")) {
            warnSmallFilesystemBlocks(o, r.blockSize());
        }
        if (conn.json) {
            Map<String, Object> m = toJson(r);
            m.put("consistency", recorded.wireName());
            if (qcow2 != null) {
                m.putAll(qcow2.report());
            }
            o.json(m);
        } else {
            out.printf(Locale.ROOT, "snapshot %s@%d committed (%s backup; consistency %s)%n", r.volume(), r.sequence(), r.mode(),
                    recorded.wireName());
            out.printf(Locale.ROOT, "  logical %s, scanned %s (read %s, holes skipped %s), changed %d blocks (%s)%n",
                    Sizes.format(r.logicalBytes()), Sizes.format(r.bytesRead()), Sizes.format(r.sourceBytesRead()),
                    Sizes.format(r.holeBytes()), r.changedBlocks(), Sizes.format(r.changedBlocks() * r.blockSize()));
            out.printf(Locale.ROOT, "  sent %d blocks (%s), newly stored %d blocks (%s), %.1f s, %.1f MB/s read%n",
                    r.sentBlocks(), Sizes.format(r.sentBytes()), r.newBlocks(), Sizes.format(r.storedBytes()), r.seconds(),
                    r.bytesRead() / 1e6 / Math.max(1e-9, r.seconds()));
            if (qcow2 != null) {
                out.println("  " + qcow2.summary());
            }
        }
        return 0;
    }

    /** Says once, at a full backup, when the source's ext file system has blocks smaller than the volume's (see agent.md, --block-size). */
    private void warnSmallFilesystemBlocks(Output o, int volumeBlockSize) {
        int fs = FilesystemBlockSize.ext(source);
        if (fs > 0 && fs < volumeBlockSize) {
            o.notice("the ext file system on " + source + " has " + fs + "-byte blocks, smaller than the volume's " + volumeBlockSize
                    + ": copies of a file may lie out of phase with the original and be stored again; make such file systems with"
                    + " 'mke2fs -b " + volumeBlockSize + "', or back this one up to a new volume with --block-size " + fs
                    + " (see agent.md, --block-size)");
        }
    }

    private ChangeHashPolicy changeHashPolicy() {
        if (rehashEvery < 0 || rehashDays < 0) {
            throw new AgentException(ExitCode.USAGE, "--rehash-every and --rehash-days must not be negative",
                    "give a number of backups or days, or 0 to turn that trigger off");
        }
        return switch (changeHash) {
            case "xxh128" -> new ChangeHashPolicy(true, rehashEvery, rehashDays);
            case "sha256" -> ChangeHashPolicy.SHA256;
            default -> throw new AgentException(ExitCode.USAGE, "--change-hash " + changeHash + " is not a change hash",
                    "give 'xxh128' (the default) or 'sha256'");
        };
    }

    static Map<String, Object> toJson(BackupResult r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("snapshotId", r.volume() + "@" + r.sequence());
        m.put("sequence", r.sequence());
        m.put("volume", r.volume());
        m.put("createdAt", Instant.ofEpochMilli(r.createdAtMillis()).toString());
        m.put("mode", r.mode());
        m.put("fullReason", r.fullReason());
        m.put("volumeBytes", r.volumeBytes());
        m.put("blockSize", r.blockSize());
        m.put("logicalBytes", r.logicalBytes());
        m.put("blocksRead", r.blocksRead());
        m.put("bytesRead", r.bytesRead());
        m.put("sourceBytesRead", r.sourceBytesRead());
        m.put("holeBytes", r.holeBytes());
        m.put("entriesSent", r.entriesSent());
        m.put("changedBlocks", r.changedBlocks());
        m.put("changedBytes", r.changedBlocks() * r.blockSize());
        m.put("sentBlocks", r.sentBlocks());
        m.put("sentBytes", r.sentBytes());
        m.put("framedBlocks", r.framedBlocks());
        m.put("newBlocks", r.newBlocks());
        m.put("storedBytes", r.storedBytes());
        m.put("seconds", Math.round(r.seconds() * 1000) / 1000.0);
        m.put("stateSaved", r.stateSaved());
        m.put("changeHash", r.changeHash());
        m.put("rehashReason", r.rehashReason());
        m.put("sha256Blocks", r.sha256Blocks());
        BackupResult.SizeChange size = r.sizeChange();
        Map<String, Object> change = null;
        if (size != null) {
            change = new LinkedHashMap<>();
            change.put("fromSequence", size.fromSequence());
            change.put("fromBytes", size.fromBytes());
            change.put("toBytes", size.toBytes());
        }
        m.put("sizeChange", change);
        return m;
    }
}
