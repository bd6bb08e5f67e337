package org.holdfast.bench.peers;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * restic with its defaults (content-defined chunking, repository format of the installed
 * version, its default compression, AES encryption with a fixed test password, local cache
 * inside the work folder). Snapshots of one volume share the image's path, so restic picks the
 * previous one as parent by itself.
 */
public final class ResticPeer extends PeerTool {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final Map<String, Map<Integer, String>> snapshots = new HashMap<>();
    private final Map<String, Path> images = new HashMap<>();

    /** Whether restic is installed. */
    public static boolean available() {
        return installed("restic");
    }

    @Override
    public String name() {
        return "restic";
    }

    @Override
    Map<String, String> env() {
        return Map.of("RESTIC_PASSWORD", PASSWORD, "RESTIC_CACHE_DIR", dir.resolve("cache").toString(),
                "RESTIC_REPOSITORY", repo.toString());
    }

    @Override
    public void open(Path dir) throws IOException {
        this.dir = Files.createDirectories(dir);
        this.repo = dir.resolve("repo");
        run("init", List.of("restic", "init"), null);
    }

    @Override
    public BackupOutcome backup(String volume, int day, Path image) throws IOException {
        images.put(volume, image);
        var o = run("backup-" + volume + "-day" + day,
                List.of("restic", "backup", "--json", "--host", "bench", image.toAbsolutePath().toString()), null);
        String id = null;
        long added = -1;
        double tool = -1;
        for (String line : o.stdout().split("\\R")) {
            if (line.contains("\"summary\"")) {
                JsonNode n = JSON.readTree(line);
                id = n.path("snapshot_id").asText(null);
                added = n.path("data_added").asLong(-1);
                tool = n.path("total_duration").asDouble(-1);
            }
        }
        if (id == null) {
            throw new IOException("restic printed no summary: " + o.stdout());
        }
        snapshots.computeIfAbsent(volume, v -> new HashMap<>()).put(day, id);
        return new BackupOutcome(o.seconds(), tool, o.peakRssBytes(), added, -1, -1, -1, id);
    }

    @Override
    public RestoreOutcome restore(String volume, int day, Path target) throws IOException {
        String id = snapshots.getOrDefault(volume, Map.of()).get(day);
        if (id == null) {
            throw new IOException("restic: no snapshot of " + volume + " for day " + day);
        }
        Path scratch = dir.resolve("restore-scratch");
        var o = run("restore-" + volume + "-day" + day,
                List.of("restic", "restore", id, "--target", scratch.toString()), null);
        takeRestored(scratch, images.get(volume), target);
        return new RestoreOutcome(o.seconds(), -1, o.peakRssBytes());
    }

    @Override
    public Map<String, Object> describe() {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("version", version(List.of("restic", "version")));
        d.put("settings", "restic init and backup with defaults; RESTIC_PASSWORD set to a fixed test password;"
                + " cache in the work folder (not counted in repository size)");
        return d;
    }
}
