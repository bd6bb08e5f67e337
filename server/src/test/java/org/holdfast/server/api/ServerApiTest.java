package org.holdfast.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.holdfast.common.tls.CertificateFingerprint;
import org.holdfast.server.app.HoldfastServer;
import org.holdfast.server.ingest.IngestServer;
import org.holdfast.server.security.Role;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * {@code GET /api/v1/server} (what the console's agent command line is made of) and the console's
 * security and caching headers, over HTTPS on a server with its self-signed certificate, reached on
 * its {@code server.address} (127.0.0.2, not the agent port's address) with the host name checked.
 */
class ServerApiTest {
    @TempDir
    static Path data;
    private static ConfigurableApplicationContext ctx;
    private static HttpClient http;
    private static int port;
    private static final ObjectMapper JSON = new ObjectMapper();

    @BeforeAll
    static void start() throws Exception {
        ctx = new SpringApplicationBuilder(HoldfastServer.class).run("--holdfast.data-dir=" + data, "--server.port=0",
                "--server.address=127.0.0.2", "--holdfast.ingest.host=127.0.0.1", "--holdfast.ingest.port=0",
                "--holdfast.cluster.host=127.0.0.3",
                "--holdfast.store.min-free-space=0", "--spring.main.banner-mode=off");
        port = Integer.parseInt(ctx.getEnvironment().getProperty("local.server.port"));
        // trust exactly the certificate the server wrote, as an operator's client would
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        ks.setCertificateEntry("holdfast", certificate());
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(ks);
        SSLContext tls = SSLContext.getInstance("TLS");
        tls.init(null, tmf.getTrustManagers(), null);
        http = HttpClient.newBuilder().sslContext(tls).connectTimeout(Duration.ofSeconds(10)).build();
    }

    @AfterAll
    static void stop() {
        if (ctx != null) {
            ctx.close();
        }
    }

    private static X509Certificate certificate() throws Exception {
        try (InputStream in = Files.newInputStream(data.resolve("tls").resolve("server.crt"))) {
            return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
        }
    }

    private static HttpResponse<String> get(String path, String token) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("https://127.0.0.2:" + port + path)).timeout(Duration.ofSeconds(30));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return http.send(b.GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void server_viewer_answersTheAgentPortTlsFingerprintAndVersion() throws Exception {
        HttpResponse<String> r = get("/api/v1/server", TestTokens.issue(ctx, Role.VIEWER));
        assertThat(r.statusCode()).isEqualTo(200);
        JsonNode s = JSON.readTree(r.body());
        assertThat(s.get("agentPort").asInt()).isEqualTo(ctx.getBean(IngestServer.class).port()).isNotEqualTo(port);
        assertThat(s.get("agentHost").asText()).isEqualTo("127.0.0.1");
        assertThat(s.get("tls").asBoolean()).isTrue();
        // the fingerprint of the certificate file on disk, in the form the agent's --fingerprint takes
        assertThat(CertificateFingerprint.parse(s.get("fingerprint").asText())).isEqualTo(CertificateFingerprint.of(certificate()));
        assertThat(s.get("fingerprint").asText()).matches("([0-9A-F]{2}:){31}[0-9A-F]{2}");
        assertThat(s.get("version").asText()).isNotBlank().doesNotContain("holdfast-server/");
        assertThat(s.get("certificateNotAfter").asText()).endsWith("Z");
    }

    @Test
    void certificate_selfSigned_namesEveryConfiguredAddress() throws Exception {
        // an operator's curl --cacert to a worker bound to its own address must not fail the name check
        assertThat(certificate().getSubjectAlternativeNames().stream().map(l -> String.valueOf(l.get(1))).toList())
                .contains("localhost", "127.0.0.1", "127.0.0.2", "127.0.0.3");
    }

    @Test
    void server_agentOrNobody_isRefused() throws Exception {
        assertThat(get("/api/v1/server", TestTokens.issue(ctx, Role.AGENT)).statusCode()).isEqualTo(403);
        assertThat(get("/api/v1/server", null).statusCode()).isEqualTo(401);
    }

    @Test
    void console_indexHtml_hasAPolicyWithoutInlineScriptsAndIsNeverCached() throws Exception {
        for (String path : new String[] {"/", "/index.html"}) {
            HttpResponse<String> r = get(path, null);
            assertThat(r.statusCode()).as(path).isEqualTo(200);
            assertThat(r.body()).contains("<div id=\"app\">");
            String csp = r.headers().firstValue("Content-Security-Policy").orElse("");
            Matcher script = Pattern.compile("script-src ([^;]*)").matcher(csp);
            assertThat(script.find()).as("script-src in %s", csp).isTrue();
            assertThat(script.group(1).trim()).isEqualTo("'self'");
            assertThat(csp).contains("frame-ancestors 'none'").contains("object-src 'none'").doesNotContain("unsafe-eval");
            assertThat(r.headers().firstValue("X-Content-Type-Options")).hasValue("nosniff");
            assertThat(r.headers().firstValue("Cache-Control")).hasValue("no-store");
            // the built page itself obeys the policy: no inline script
            assertThat(Pattern.compile("<script(?![^>]*\\ssrc=)[^>]*>").matcher(r.body()).find()).as(r.body()).isFalse();
        }
    }

    @Test
    void console_hashedAssets_areCachedForAYear_apiAnswersAreNot() throws Exception {
        String html = get("/", null).body();
        Matcher asset = Pattern.compile("\"(/console/[^\"]+\\.(js|css))\"").matcher(html);
        int found = 0;
        while (asset.find()) {
            HttpResponse<String> r = get(asset.group(1), null);
            assertThat(r.statusCode()).as(asset.group(1)).isEqualTo(200);
            assertThat(r.headers().firstValue("Cache-Control")).as(asset.group(1)).hasValue("public, max-age=31536000, immutable");
            assertThat(r.headers().firstValue("X-Content-Type-Options")).hasValue("nosniff");
            found++;
        }
        assertThat(found).as("assets named in %s", html).isGreaterThanOrEqualTo(2);
        HttpResponse<String> api = get("/api/v1/server", TestTokens.issue(ctx, Role.VIEWER));
        assertThat(api.headers().firstValue("Cache-Control").orElse("")).contains("no-store");
    }
}
