package org.holdfast.client.cli;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import org.holdfast.client.net.ServerConnection;
import org.holdfast.client.progress.Sizes;
import org.holdfast.client.restore.RestoreResult;
import org.holdfast.client.restore.RestoreSession;
import org.holdfast.client.restore.RestoreWriter;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code restore}: writes a snapshot's exact bytes to a file or block device, verifying every block. */
@Command(name = "restore", mixinStandardHelpOptions = true,
        description = {"Restore a snapshot of --volume into --target, verifying every block's SHA-256.",
            "A regular file is written beside the target and renamed over it at the end",
            "(zero blocks become holes); a block device is written in place (zero blocks",
            "as zeros) and must be at least the volume's size. A target that exists and",
            "is not empty, or a device, is overwritten only with --force; a new file gets",
            "mode 0600, an existing one keeps its mode."})
final class RestoreCommand extends HoldfastAgent.Subcommand implements Callable<Integer> {
    @Mixin
    ConnectionOptions conn;

    @Mixin
    HandoffOptions handoff;

    @Option(names = "--snapshot", paramLabel = "ID", required = true,
            description = "Snapshot id as 'snapshots' and the REST API list it (volume@sequence),"
                    + " the sequence alone, or 'latest'.")
    String snapshot;

    @Option(names = "--target", paramLabel = "PATH", required = true, description = "File or block device to write.")
    Path target;

    @Option(names = "--force", description = "Overwrite a --target that exists and is not empty, or a block device"
            + " (without it the restore refuses, exit 2, before connecting).")
    boolean force;

    @Override
    public Integer call() {
        return handoff.runInDaemonOrHere(conn, out, err, this::runHere);
    }

    /** The restore in this process. */
    private Integer runHere(Output o) {
        RestoreResult r;
        String volume = conn.volume();
        RestoreWriter.checkOverwrite(target, force); // before the network: nothing to wait for
        RestoreWriter.removeLeftovers(target, o::notice);
        try (ServerConnection c = conn.open(o::notice)) {
            long seq = RestoreSession.resolve(c, volume, snapshot);
            r = RestoreSession.run(c, volume, seq, target, force, o.progress("restore " + volume + "@" + seq));
        }
        if (conn.json) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("snapshotId", r.volume() + "@" + r.sequence());
            m.put("sequence", r.sequence());
            m.put("volume", r.volume());
            m.put("target", r.target());
            m.put("volumeBytes", r.volumeBytes());
            m.put("blockSize", r.blockSize());
            m.put("blocks", r.blocks());
            m.put("zeroBlocks", r.zeroBlocks());
            m.put("receivedBytes", r.receivedBytes());
            m.put("writtenBytes", r.writtenBytes());
            m.put("verified", true);
            m.put("seconds", Math.round(r.seconds() * 1000) / 1000.0);
            o.json(m);
        } else {
            out.printf(Locale.ROOT, "restored %s@%d to %s: %s in %d blocks (%d zero), received %s, %.1f s, all blocks verified%n",
                    r.volume(), r.sequence(), r.target(), Sizes.format(r.volumeBytes()), r.blocks(), r.zeroBlocks(),
                    Sizes.format(r.receivedBytes()), r.seconds());
        }
        return 0;
    }
}
