package org.holdfast.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Random;
import java.util.stream.Stream;
import org.holdfast.server.app.HoldfastServer;
import org.holdfast.server.ingest.AgentDriver;
import org.holdfast.server.ingest.IngestServer;
import org.holdfast.server.security.Role;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ApplicationContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * GET /api/v1/volumes/{name}/snapshots/{snapshot}/image against real backups over a real port:
 * the whole image byte for byte, single ranges at and across block boundaries, 416, 404, and a
 * corrupted block in the data log that ends the download before one wrong byte is sent.
 */
@SpringBootTest(classes = HoldfastServer.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@AutoConfigureObservability
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ImageDownloadApiTest {
    private static final int BS = 4096;
    private static final Path DATA;

    static {
        try {
            DATA = Files.createTempDirectory("holdfast-image-test");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry r) {
        r.add("holdfast.data-dir", DATA::toString);
        r.add("holdfast.tls.enabled", () -> "false");
        r.add("holdfast.ingest.host", () -> "127.0.0.1");
        r.add("holdfast.ingest.port", () -> "0");
        r.add("holdfast.store.min-free-space", () -> "0");
    }

    @LocalServerPort
    int port;

    @Autowired
    ApplicationContext context;

    @Autowired
    IngestServer ingest;

    @Autowired
    MeterRegistry meters;

    @Autowired
    org.holdfast.server.stats.TransferRates rates;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private final ObjectMapper json = new ObjectMapper();
    private String operator;
    /** 40 blocks and an odd tail: random, zero, compressible (zstd) and repeated blocks. */
    private byte[] image;
    /** 512 random blocks, the last one corrupted in the data log after the backup. */
    private byte[] victim;

    @BeforeAll
    void backUp() throws Exception {
        Random rnd = new Random(11);
        image = new byte[40 * BS + 1000];
        rnd.nextBytes(image);
        Arrays.fill(image, 5 * BS, 9 * BS, (byte) 0); // zero blocks: never stored
        byte[] text = "holdfast image download ".repeat(200).getBytes(StandardCharsets.US_ASCII);
        for (int b = 12; b < 16; b++) {
            System.arraycopy(text, 0, image, b * BS, BS); // compressible: stored as zstd
        }
        System.arraycopy(image, 20 * BS, image, 30 * BS, 2 * BS); // duplicates: stored once
        victim = new byte[512 * BS];
        rnd.nextBytes(victim);
        try (AgentDriver a = new AgentDriver(ingest.port(), TestTokens.issue(context, Role.AGENT))) {
            a.hello();
            byte[] first = image.clone();
            first[3] ^= 1;
            a.backup("img", first, BS, true);
            a.backup("img", image, BS, true); // snapshot 2 differs from 1 in one block: a range must come from the right one
            a.backup("img-victim", victim, BS, true); // last: its last block is the last record of the newest data log
        }
        corruptLastRecord();
        operator = TestTokens.issue(context, Role.OPERATOR);
    }

    /** Flips the last byte of the newest data log: the payload of img-victim's last block. */
    private static void corruptLastRecord() throws IOException {
        Path log;
        try (Stream<Path> s = Files.list(DATA.resolve("data"))) {
            log = s.filter(p -> p.getFileName().toString().endsWith(".hfl")).max(Path::compareTo).orElseThrow();
        }
        try (RandomAccessFile f = new RandomAccessFile(log.toFile(), "rw")) {
            long at = f.length() - 1;
            f.seek(at);
            int b = f.read();
            f.seek(at);
            f.write(b ^ 0x40);
        }
    }

    private HttpRequest.Builder get(String path, String range) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).timeout(Duration.ofSeconds(60))
                .header("Authorization", "Bearer " + operator);
        return range == null ? b : b.header("Range", range);
    }

    private HttpResponse<byte[]> bytes(HttpRequest.Builder b) throws Exception {
        return http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private static String sha256(byte[] b) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
    }

    @Test
    void image_wholeSnapshot_sameBytesAsTheBackup() throws Exception {
        long restoredBefore = rates.total(org.holdfast.server.stats.TransferRates.Direction.RESTORE);
        HttpResponse<byte[]> r = bytes(get("/api/v1/volumes/img/snapshots/2/image", null));
        // counted as restored bytes (the statistics' restore rate); other tests may download meanwhile, never less
        assertThat(rates.total(org.holdfast.server.stats.TransferRates.Direction.RESTORE) - restoredBefore)
                .isGreaterThanOrEqualTo(image.length);
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Type").orElse("")).isEqualTo("application/octet-stream");
        assertThat(r.headers().firstValueAsLong("Content-Length").orElse(-1)).isEqualTo(image.length);
        assertThat(r.headers().firstValue("Accept-Ranges").orElse("")).isEqualTo("bytes");
        assertThat(r.headers().firstValue("ETag")).isPresent();
        assertThat(sha256(r.body())).isEqualTo(sha256(image));
    }

    @Test
    void image_olderSnapshotByItsId_thatSnapshotsBytes() throws Exception {
        byte[] first = image.clone();
        first[3] ^= 1;
        HttpResponse<byte[]> r = bytes(get("/api/v1/volumes/img/snapshots/img@1/image", null));
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(sha256(r.body())).isEqualTo(sha256(first));
    }

    @Test
    void image_ranges_partialContentWithTheRightBytes() throws Exception {
        long len = image.length;
        long[][] ranges = {
            {BS, 2 * BS - 1},            // exactly one block
            {1000, 10_000},              // starts and ends mid-block, spans three
            {5 * BS - 10, 9 * BS + 10},  // across the zero blocks
            {12 * BS + 7, 12 * BS + 7},  // one byte of a zstd block
            {40 * BS, len - 1},          // the partial tail block
            {0, 0},
        };
        for (long[] want : ranges) {
            HttpResponse<byte[]> r = bytes(get("/api/v1/volumes/img/snapshots/2/image", "bytes=" + want[0] + "-" + want[1]));
            assertThat(r.statusCode()).as("range %d-%d", want[0], want[1]).isEqualTo(206);
            assertThat(r.headers().firstValue("Content-Range").orElse(""))
                    .isEqualTo("bytes " + want[0] + "-" + want[1] + "/" + len);
            assertThat(r.body()).as("range %d-%d", want[0], want[1])
                    .isEqualTo(Arrays.copyOfRange(image, (int) want[0], (int) want[1] + 1));
        }
        HttpResponse<byte[]> open = bytes(get("/api/v1/volumes/img/snapshots/2/image", "bytes=" + (len - 5000) + "-"));
        assertThat(open.statusCode()).isEqualTo(206);
        assertThat(open.body()).isEqualTo(Arrays.copyOfRange(image, (int) len - 5000, (int) len));
        HttpResponse<byte[]> suffix = bytes(get("/api/v1/volumes/img/snapshots/2/image", "bytes=-100"));
        assertThat(suffix.statusCode()).isEqualTo(206);
        assertThat(suffix.body()).isEqualTo(Arrays.copyOfRange(image, (int) len - 100, (int) len));
        HttpResponse<byte[]> past = bytes(get("/api/v1/volumes/img/snapshots/2/image", "bytes=100-" + (len + 5000)));
        assertThat(past.statusCode()).isEqualTo(206);
        assertThat(past.body()).isEqualTo(Arrays.copyOfRange(image, 100, (int) len)); // an end past the image is cut to it
    }

    @Test
    void image_severalRangesOrAStaleIfRange_wholeImage() throws Exception {
        HttpResponse<byte[]> multi = bytes(get("/api/v1/volumes/img/snapshots/2/image", "bytes=0-10,20-30"));
        assertThat(multi.statusCode()).isEqualTo(200);
        assertThat(multi.body()).hasSize(image.length);
        HttpResponse<byte[]> stale = bytes(get("/api/v1/volumes/img/snapshots/2/image", "bytes=0-10").header("If-Range", "\"other\""));
        assertThat(stale.statusCode()).isEqualTo(200);
        assertThat(sha256(stale.body())).isEqualTo(sha256(image));
    }

    @Test
    void image_rangePastTheEnd_rangeNotSatisfiable() throws Exception {
        HttpResponse<byte[]> r = bytes(get("/api/v1/volumes/img/snapshots/2/image", "bytes=" + image.length + "-"));
        assertThat(r.statusCode()).isEqualTo(416);
        assertThat(r.headers().firstValue("Content-Range").orElse("")).isEqualTo("bytes */" + image.length);
        assertThat(r.headers().firstValue("Content-Type").orElse("")).startsWith("application/problem+json");
        JsonNode p = json.readTree(r.body());
        assertThat(p.path("type").asText()).isEqualTo("urn:holdfast:problem:range-not-satisfiable");
    }

    @Test
    void image_unknownSnapshotOrVolume_notFoundProblems() throws Exception {
        HttpResponse<byte[]> snap = bytes(get("/api/v1/volumes/img/snapshots/99/image", null));
        assertThat(snap.statusCode()).isEqualTo(404);
        assertThat(json.readTree(snap.body()).path("type").asText()).isEqualTo("urn:holdfast:problem:unknown-snapshot");
        HttpResponse<byte[]> vol = bytes(get("/api/v1/volumes/no-such/snapshots/1/image", null));
        assertThat(vol.statusCode()).isEqualTo(404);
        assertThat(json.readTree(vol.body()).path("type").asText()).isEqualTo("urn:holdfast:problem:unknown-volume");
        HttpResponse<byte[]> bad = bytes(get("/api/v1/volumes/img/snapshots/latest/image", null));
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(json.readTree(bad.body()).path("type").asText()).isEqualTo("urn:holdfast:problem:invalid-request");
        HttpResponse<byte[]> both = bytes(get("/api/v1/volumes/no-such/snapshots/latest/image", null));
        assertThat(both.statusCode()).as("an unknown volume is named before a bad snapshot id").isEqualTo(404);
        assertThat(json.readTree(both.body()).path("type").asText()).isEqualTo("urn:holdfast:problem:unknown-volume");
    }

    @Test
    void image_head_headersWithoutBody() throws Exception {
        HttpResponse<byte[]> r = bytes(get("/api/v1/volumes/img/snapshots/2/image", null).method("HEAD", HttpRequest.BodyPublishers.noBody()));
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValueAsLong("Content-Length").orElse(-1)).isEqualTo(image.length);
        assertThat(r.body()).isEmpty();
    }

    @Test
    void image_corruptBlockMidDownload_endsShortWithOnlyCorrectBytes() throws Exception {
        double before = failures();
        HttpResponse<InputStream> r = http.send(get("/api/v1/volumes/img-victim/snapshots/1/image", null).build(),
                HttpResponse.BodyHandlers.ofInputStream());
        assertThat(r.statusCode()).isEqualTo(200); // the status went out with the first bytes, before the bad block was read
        assertThat(r.headers().firstValueAsLong("Content-Length").orElse(-1)).isEqualTo(victim.length);
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        IOException ended = null;
        try (InputStream in = r.body()) {
            in.transferTo(got);
        } catch (IOException e) {
            ended = e;
        }
        byte[] received = got.toByteArray();
        assertThat(ended).as("the client must see the body end early").isNotNull();
        assertThat(received.length).isLessThan(victim.length - BS + 1); // nothing of the corrupt last block
        assertThat(received).isEqualTo(Arrays.copyOf(victim, received.length)); // and every byte sent is right
        assertThat(failures()).isEqualTo(before + 1);
    }

    @Test
    void image_corruptBlockFirstInTheRange_corruptDataProblem() throws Exception {
        double before = failures();
        HttpResponse<byte[]> r = bytes(get("/api/v1/volumes/img-victim/snapshots/1/image", "bytes=" + (511L * BS) + "-"));
        assertThat(r.statusCode()).isEqualTo(500);
        assertThat(json.readTree(r.body()).path("type").asText()).isEqualTo("urn:holdfast:problem:corrupt-data");
        assertThat(failures()).isEqualTo(before + 1);
        // the blocks before it are fine
        HttpResponse<byte[]> ok = bytes(get("/api/v1/volumes/img-victim/snapshots/1/image", "bytes=0-" + (511L * BS - 1)));
        assertThat(ok.statusCode()).isEqualTo(206);
        assertThat(sha256(ok.body())).isEqualTo(sha256(Arrays.copyOf(victim, 511 * BS)));
    }

    /** POST .../image/link with {@code token}; answers the response. */
    private HttpResponse<byte[]> link(String volume, String snapshot, String token) throws Exception {
        return bytes(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/v1/volumes/" + volume + "/snapshots/" + snapshot
                + "/image/link")).timeout(Duration.ofSeconds(60)).header("Authorization", "Bearer " + token)
                .POST(HttpRequest.BodyPublishers.noBody()));
    }

    /** GET without any Authorization header, as a browser follows a link. */
    private HttpResponse<byte[]> plain(String pathAndQuery, String range) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + pathAndQuery)).timeout(Duration.ofSeconds(60));
        return bytes(range == null ? b : b.header("Range", range));
    }

    private void assertInvalidLink(HttpResponse<byte[]> r, String detail) throws Exception {
        assertThat(r.statusCode()).isEqualTo(403);
        JsonNode p = json.readTree(r.body());
        assertThat(p.path("type").asText()).isEqualTo("urn:holdfast:problem:invalid-download-link");
        assertThat(p.path("detail").asText()).contains(detail).contains("ask for a new one");
    }

    @Test
    void downloadLink_withoutHeader_sameBytesOnlyForThatSnapshotAndAudited() throws Exception {
        HttpResponse<byte[]> issued = link("img", "img@2", operator);
        assertThat(issued.statusCode()).isEqualTo(200);
        JsonNode l = json.readTree(issued.body());
        String href = l.path("href").asText();
        assertThat(href).startsWith("/api/v1/volumes/img/snapshots/2/image/download?link=");
        assertThat(java.time.Instant.parse(l.path("expiresAt").asText())).isAfter(java.time.Instant.now());
        assertThat(l.path("lifetimeSeconds").asLong()).isEqualTo(300);

        HttpResponse<byte[]> whole = plain(href, null);
        assertThat(whole.statusCode()).isEqualTo(200);
        assertThat(whole.headers().firstValue("Content-Disposition").orElse("")).contains("img-2.img");
        assertThat(sha256(whole.body())).isEqualTo(sha256(image));
        HttpResponse<byte[]> part = plain(href, "bytes=1000-10000");
        assertThat(part.statusCode()).isEqualTo(206);
        assertThat(part.body()).isEqualTo(Arrays.copyOfRange(image, 1000, 10_001));

        // the same link on snapshot 1, on another volume, altered, or absent: refused, nothing named
        assertInvalidLink(plain(href.replace("/snapshots/2/", "/snapshots/1/"), null), "another snapshot");
        assertInvalidLink(plain(href.replace("/volumes/img/", "/volumes/img-victim/"), null), "another snapshot");
        assertInvalidLink(plain(href.replace("/volumes/img/", "/volumes/no-such/"), null), "another snapshot");
        String altered = href.substring(0, href.length() - 2) + (href.endsWith("AA") ? "BB" : "AA");
        assertInvalidLink(plain(altered, null), "not one this server issued");
        assertInvalidLink(plain("/api/v1/volumes/img/snapshots/2/image/download", null), "no download link given");

        String admin = TestTokens.issue(context, Role.ADMIN);
        HttpResponse<byte[]> audit = bytes(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                + "/api/v1/audit?action=snapshot.download&target=volume:img@2&limit=1000")).header("Authorization", "Bearer " + admin));
        assertThat(json.readTree(audit.body()).path("entries").findValuesAsText("principal")).anyMatch(p -> p.endsWith(" (link)"));
        HttpResponse<byte[]> issuedAudit = bytes(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                + "/api/v1/audit?action=snapshot.download-link&limit=1000")).header("Authorization", "Bearer " + admin));
        assertThat(json.readTree(issuedAudit.body()).path("entries").findValuesAsText("target")).contains("volume:img@2");
    }

    @Test
    void downloadLink_viewerOrUnknownSnapshot_refused_andDiesWithItsHoldersToken() throws Exception {
        assertThat(link("img", "2", TestTokens.issue(context, Role.VIEWER)).statusCode()).isEqualTo(403);
        HttpResponse<byte[]> unknown = link("img", "99", operator);
        assertThat(unknown.statusCode()).isEqualTo(404);
        assertThat(json.readTree(unknown.body()).path("type").asText()).isEqualTo("urn:holdfast:problem:unknown-snapshot");

        String shortLived = TestTokens.issue(context, Role.OPERATOR);
        String href = json.readTree(link("img", "1", shortLived).body()).path("href").asText();
        assertThat(plain(href, "bytes=0-0").statusCode()).isEqualTo(206);
        org.holdfast.server.security.ApiTokens tokens = context.getBean(org.holdfast.server.security.ApiTokens.class);
        tokens.revoke(org.holdfast.server.security.ApiTokens.idOf(shortLived).orElseThrow(), "test", "test");
        assertInvalidLink(plain(href, null), "may no longer download");
    }

    private double failures() {
        return meters.get("holdfast.image.verify.failures").counter().count();
    }
}
