package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.holdfast.server.store.object.S3ProxyFixture;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The figure of docs/benchmarks.md "Object store: cold-cache restore": the bench's 1 GiB ext4 image
 * ({@code -Dholdfast.bench.image}, default {@code /work/prof/full.img}; skipped when absent) backed up
 * to a real server process, then restored by a real agent process (1) on backend local, (2) on backend
 * s3 (S3Proxy, filesystem store) with a cold cache (every sealed log and cached range deleted, catalog
 * kept) and read-ahead on, (3) the same with read-ahead off. Reports MB/s (logical bytes / wall time
 * of the restore process), GET requests and bytes fetched; every restore must be byte-identical.
 * Minutes of work: slow profile only.
 */
@Tag("slow")
class ObjectStoreRestoreFigureTest {
    private static final LogDir logs = new LogDir("ObjectStoreRestoreFigureTest");

    @TempDir
    Path dir;

    /** The best of the repeats (by wall time): wall and in-agent seconds, logical bytes, GETs and bytes fetched. */
    private record Row(String setup, double seconds, double agentSeconds, long bytes, long gets, long getBytes, List<Double> all) {
        double mbPerSecond() {
            return bytes / 1e6 / seconds;
        }
    }

    private static long metric(ServerProcess server, String name, String tag) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "\\{[^}]*" + Pattern.quote(tag) + "[^}]*\\} ([0-9.E+]+)$")
                .matcher(server.get("/actuator/prometheus").body());
        return m.find() ? (long) Double.parseDouble(m.group(1)) : -1;
    }

    private static String sha256(Path p) throws Exception {
        MessageDigest md = MessageDigest.getInstance("SHA-256");
        byte[] buf = new byte[1 << 20];
        try (InputStream in = Files.newInputStream(p)) {
            for (int n; (n = in.read(buf)) > 0; ) {
                md.update(buf, 0, n);
            }
        }
        return HexFormat.of().formatHex(md.digest());
    }

    private static List<Path> logFiles(Path data) throws Exception {
        try (Stream<Path> s = Files.list(data)) {
            return s.filter(p -> p.getFileName().toString().matches("log-[0-9a-f]{8}\\.hfl")).sorted().toList();
        }
    }

    /**
     * Backs up {@code image}, then {@code repeats} times: restarts the server (s3: with the sealed logs
     * and cached ranges deleted first, a cold cache), restores, and checks the bytes.
     */
    private Row run(String setup, Map<String, String> props, Path image, String digest, boolean s3, int repeats) throws Exception {
        AgentProcess agent = new AgentProcess(logs);
        Path work = dir.resolve(setup.replaceAll("[^a-z0-9]+", "-"));
        try (ServerProcess server = ServerProcess.startWithHeap(work, "sungem", props, logs, "2g")) {
            BackupSummary b = agent.backup(server, "img", image, Files.createDirectories(work.resolve("state")));
            Path data = server.dataDir().resolve("data");
            List<Path> sealed = logFiles(data).subList(0, logFiles(data).size() - 1); // the newest is active: it stays
            if (s3) {
                // a small image fits the active log, which is never uploaded: there would be nothing to fetch
                assertThat(sealed).as("%s stores too little to seal a 64 MB log; take a bigger image", image).isNotEmpty();
                await().atMost(Duration.ofMinutes(5)).until(() -> uploaded(server) >= sealed.size());
            }
            Row best = null;
            List<Double> all = new ArrayList<>();
            for (int i = 0; i < repeats; i++) {
                server.close();
                if (s3) {
                    wipe(sealed, data.resolve("ranges"));
                }
                server.start();
                long gets = s3 ? metric(server, "holdfast_objects_requests_total", "kind=\"get\"") : 0;
                long getBytes = s3 ? metric(server, "holdfast_objects_bytes_total", "direction=\"get\"") : 0;
                Path out = work.resolve("restored.img");
                AgentResult r = agent.restore(server, "img", b.snapshotId(), out);
                assertThat(sha256(out)).as("%s restores byte-identical", setup).isEqualTo(digest);
                long size = Files.size(out);
                Files.delete(out);
                double seconds = r.elapsed().toNanos() / 1e9;
                all.add(seconds);
                if (best == null || seconds < best.seconds()) {
                    best = new Row(setup, seconds, AgentProcess.json(r).path("seconds").asDouble(), size,
                            s3 ? metric(server, "holdfast_objects_requests_total", "kind=\"get\"") - gets : 0,
                            s3 ? metric(server, "holdfast_objects_bytes_total", "direction=\"get\"") - getBytes : 0, all);
                }
            }
            return best;
        }
    }

    private static void wipe(List<Path> sealed, Path ranges) throws Exception {
        for (Path p : sealed) {
            Files.deleteIfExists(p);
        }
        try (Stream<Path> s = Files.list(ranges)) {
            for (Path p : s.toList()) {
                Files.delete(p);
            }
        }
    }

    private static long uploaded(ServerProcess server) {
        Matcher m = Pattern.compile("(?m)^holdfast_objects_logs_uploaded_total(?:\\{[^}]*\\})? ([0-9.E+]+)$")
                .matcher(server.get("/actuator/prometheus").body());
        return m.find() ? (long) Double.parseDouble(m.group(1)) : -1;
    }

    @Test
    void restore_2GiBExt4Image_coldCache_readAheadOnOff_vsLocal() throws Exception {
        Path image = Path.of(System.getProperty("holdfast.bench.image", "/work/prof/full.img"));
        Assumptions.assumeTrue(Files.isRegularFile(image), "no bench image at " + image);
        String digest = sha256(image);
        int repeats = Integer.getInteger("holdfast.bench.repeats", 2);
        String loadBefore = Files.readString(Path.of("/proc/loadavg")).strip();
        List<Row> rows = new ArrayList<>();
        rows.add(run("local", Map.of("holdfast.store.log-roll-size", "64MB"), image, digest, false, repeats));
        try (S3ProxyFixture s3 = S3ProxyFixture.start(dir.resolve("s3"))) {
            for (boolean ahead : new boolean[] {true, false}) {
                Map<String, String> props = new LinkedHashMap<>();
                props.put("holdfast.store.backend", "s3");
                props.put("holdfast.store.s3.endpoint", s3.endpoint().toString());
                props.put("holdfast.store.s3.bucket", S3ProxyFixture.BUCKET);
                props.put("holdfast.store.s3.prefix", ahead ? "ahead/" : "plain/");
                props.put("holdfast.store.s3.credentials-file", s3.settings("").credentialsFile().toString());
                props.put("holdfast.store.s3.node", "bench");
                props.put("holdfast.store.log-roll-size", "64MB");
                props.put("holdfast.store.s3.read-ahead", Boolean.toString(ahead));
                rows.add(run(ahead ? "s3, cold cache, read-ahead" : "s3, cold cache, no read-ahead", props, image, digest, true, repeats));
            }
        }
        StringBuilder t = new StringBuilder("| setup | restore s (best) | all runs s | in-agent s | MB/s | time vs local | GETs | MiB fetched |\n"
                + "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |\n");
        for (Row r : rows) {
            t.append(String.format("| %s | %.1f | %s | %.1f | %.1f | %.2fx | %d | %.1f |%n", r.setup(), r.seconds(),
                    r.all().stream().map(x -> String.format("%.1f", x)).toList(), r.agentSeconds(), r.mbPerSecond(),
                    r.seconds() / rows.get(0).seconds(), r.gets(), r.getBytes() / 1048576.0));
        }
        t.append("\nload average before: ").append(loadBefore).append("; after: ")
                .append(Files.readString(Path.of("/proc/loadavg")).strip()).append('\n');
        System.out.println(t);
        Files.writeString(Path.of("target", "objstore-restore-figure.md"), t);
        assertThat(rows.get(1).gets()).as("the cold cache read from the object store").isPositive();
    }
}
