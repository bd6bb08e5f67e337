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
 * borg with {@code borg init -e none} and otherwise default settings (buzhash content-defined
 * chunker, lz4 compression). One archive per volume and day; the files cache and security folder
 * live inside the work folder.
 */
public final class BorgPeer extends PeerTool {
    private static final ObjectMapper JSON = new ObjectMapper();
    private final Map<String, Path> images = new HashMap<>();

    /** Whether borg is installed. */
    public static boolean available() {
        return installed("borg");
    }

    @Override
    public String name() {
        return "borg";
    }

    @Override
    Map<String, String> env() {
        return Map.of("BORG_PASSPHRASE", PASSWORD, "BORG_BASE_DIR", dir.resolve("base").toString(),
                "BORG_UNKNOWN_UNENCRYPTED_REPO_ACCESS_IS_OK", "yes", "BORG_RELOCATED_REPO_ACCESS_IS_OK", "yes",
                "BORG_REPO", repo.toString());
    }

    @Override
    public void open(Path dir) throws IOException {
        this.dir = Files.createDirectories(dir);
        this.repo = dir.resolve("repo");
        run("init", List.of("borg", "init", "-e", "none", repo.toString()), null);
    }

    private static String archive(String volume, int day) {
        return volume + "-day" + day;
    }

    @Override
    public BackupOutcome backup(String volume, int day, Path image) throws IOException {
        images.put(volume, image);
        var o = run("backup-" + volume + "-day" + day, List.of("borg", "create", "--json",
                "::" + archive(volume, day), image.toAbsolutePath().toString()), null);
        long added = -1;
        double tool = -1;
        try {
            JsonNode n = JSON.readTree(o.stdout());
            added = n.path("archive").path("stats").path("deduplicated_size").asLong(-1);
            tool = n.path("archive").path("duration").asDouble(-1);
        } catch (IOException e) {
            // Stats are a nicety; the repository size is measured separately.
        }
        return new BackupOutcome(o.seconds(), tool, o.peakRssBytes(), added, -1, -1, -1, archive(volume, day));
    }

    @Override
    public RestoreOutcome restore(String volume, int day, Path target) throws IOException {
        Path scratch = Files.createDirectories(dir.resolve("restore-scratch"));
        var o = run("restore-" + volume + "-day" + day, List.of("borg", "extract", "::" + archive(volume, day)), scratch);
        takeRestored(scratch, images.get(volume), target);
        return new RestoreOutcome(o.seconds(), -1, o.peakRssBytes());
    }

    @Override
    public Map<String, Object> describe() {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("version", version(List.of("borg", "--version")));
        d.put("settings", "borg init -e none; borg create and extract with defaults (buzhash chunker, lz4)");
        return d;
    }
}
