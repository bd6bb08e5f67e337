package org.holdfast.client.cli;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.holdfast.client.net.ServerConnection;
import org.holdfast.client.progress.Sizes;
import org.holdfast.common.protocol.ListSnapshots;
import org.holdfast.common.protocol.SnapshotInfo;
import org.holdfast.common.protocol.SnapshotList;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code snapshots}: lists a volume's committed snapshots. */
@Command(name = "snapshots", mixinStandardHelpOptions = true,
        description = "List the committed snapshots of --volume, oldest first.")
final class SnapshotsCommand extends HoldfastAgent.Subcommand implements Callable<Integer> {
    private static final DateTimeFormatter CREATED = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss'Z'").withZone(ZoneOffset.UTC);

    @Mixin
    ConnectionOptions conn;

    @Override
    public Integer call() {
        List<SnapshotInfo> list;
        Output o = new Output(out, err, conn.json);
        try (ServerConnection c = conn.open(o::notice)) {
            c.send(new ListSnapshots(conn.volume()));
            list = new ArrayList<>(c.expect(SnapshotList.class, ConnectionOptions.HELLO_TIMEOUT).snapshots());
        }
        list.sort(Comparator.comparingLong(SnapshotInfo::sequence));
        if (conn.json) {
            List<Map<String, Object>> rows = new ArrayList<>();
            for (SnapshotInfo s : list) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("id", conn.volume() + "@" + s.sequence());
                m.put("sequence", s.sequence());
                m.put("createdAt", Instant.ofEpochMilli(s.createdAtMillis()).toString());
                m.put("volumeBytes", s.volumeBytes());
                m.put("blockSize", s.blockSize());
                m.put("logicalBytes", s.logicalBytes());
                m.put("changedBlocks", s.changedBlocks());
                m.put("storedBytes", s.storedBytes());
                rows.add(m);
            }
            new Output(out, err, true).json(rows);
            return 0;
        }
        if (list.isEmpty()) {
            out.println("no snapshots of " + conn.volume());
            return 0;
        }
        int w = Math.max(2, conn.volume().length() + 1 + String.valueOf(list.get(list.size() - 1).sequence()).length());
        out.printf("%-" + w + "s  %-20s  %10s  %10s  %10s  %10s%n", "ID", "CREATED", "SIZE", "LOGICAL", "CHANGED", "STORED");
        for (SnapshotInfo s : list) {
            out.printf("%-" + w + "s  %-20s  %10s  %10s  %10d  %10s%n", conn.volume() + "@" + s.sequence(),
                    CREATED.format(Instant.ofEpochMilli(s.createdAtMillis())),
                    Sizes.format(s.volumeBytes()), Sizes.format(s.logicalBytes()), s.changedBlocks(), Sizes.format(s.storedBytes()));
        }
        return 0;
    }
}
