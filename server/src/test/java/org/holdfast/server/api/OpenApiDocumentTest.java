package org.holdfast.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.holdfast.server.app.HoldfastServer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The served OpenAPI document: title, version, the bearer scheme on every API operation, tags by
 * resource, and a problem-detail 4xx response on every operation. Read without a token (it is
 * open, so that Swagger UI can load it). Written to target/openapi.json for a look.
 */
@SpringBootTest(classes = HoldfastServer.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@AutoConfigureObservability
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OpenApiDocumentTest {
    private static final Path DATA;
    private static final Set<String> TAGS = Set.of("Volumes", "Snapshots", "Retention", "Jobs", "Verify", "GC", "Stats", "Agents", "Users",
            "Tokens", "Auth", "Audit", "Cluster", "Catalog");

    static {
        try {
            DATA = Files.createTempDirectory("holdfast-openapi-test");
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

    private JsonNode doc;

    @BeforeAll
    void fetch() throws Exception {
        HttpResponse<String> r = RestCalls.call(HttpClient.newHttpClient(), port, "GET", "/v3/api-docs", null, null);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        Files.writeString(Path.of("target", "openapi.json"), r.body());
        doc = new ObjectMapper().readTree(r.body());
    }

    @Test
    void schemas_snapshotConsistencyAndDaemonRuns_documentedWithTheirValues() {
        JsonNode schemas = doc.path("components").path("schemas");
        assertThat(schemas.path("SnapshotView").path("properties").path("consistency").path("enum")).extracting(JsonNode::asText)
                .containsExactly("application", "crash", "unknown");
        assertThat(schemas.path("AgentView").path("properties").path("runs").path("items").path("$ref").asText())
                .isEqualTo("#/components/schemas/RunView");
        assertThat(schemas.path("RunView").path("properties").path("result").path("enum")).extracting(JsonNode::asText)
                .containsExactly("succeeded", "failed", "interrupted");
    }

    /** (path, method, operation) of every /api operation. */
    private List<Map.Entry<String, JsonNode>> apiOperations() {
        List<Map.Entry<String, JsonNode>> ops = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> p = doc.path("paths").fields(); p.hasNext(); ) {
            Map.Entry<String, JsonNode> path = p.next();
            if (!path.getKey().startsWith("/api/")) {
                continue;
            }
            path.getValue().fields().forEachRemaining(m -> ops.add(Map.entry(m.getKey().toUpperCase() + " " + path.getKey(), m.getValue())));
        }
        return ops;
    }

    @Test
    void info_titleVersionDescription() {
        assertThat(doc.at("/info/title").asText()).isEqualTo("Holdfast administration API");
        assertThat(doc.at("/info/version").asText()).matches("\\d+\\.\\d+\\.\\d+.*");
        assertThat(doc.at("/info/description").asText()).contains("problem detail");
    }

    @Test
    void security_bearerSchemeOnEveryOperationButLogin() {
        assertThat(doc.at("/components/securitySchemes/bearer/type").asText()).isEqualTo("http");
        assertThat(doc.at("/components/securitySchemes/bearer/scheme").asText()).isEqualTo("bearer");
        List<String> open = new ArrayList<>();
        for (Map.Entry<String, JsonNode> op : apiOperations()) {
            if (!op.getValue().path("security").toString().contains("\"bearer\"")) {
                open.add(op.getKey());
            }
        }
        assertThat(open).containsExactlyInAnyOrder("POST /api/v1/auth/login",
                "GET /api/v1/volumes/{name}/snapshots/{snapshot}/image/download");
    }

    @Test
    void tags_oneResourceTagPerOperation() {
        List<String> wrong = new ArrayList<>();
        for (Map.Entry<String, JsonNode> op : apiOperations()) {
            JsonNode tags = op.getValue().path("tags");
            if (tags.size() != 1 || !TAGS.contains(tags.get(0).asText())) {
                wrong.add(op.getKey() + " " + tags);
            }
        }
        assertThat(wrong).isEmpty();
        assertThat(doc.at("/paths/~1api~1v1~1volumes~1{name}/delete/tags/0").asText()).isEqualTo("Volumes");
        assertThat(doc.at("/paths/~1api~1v1~1volumes~1{name}~1snapshots~1{snapshot}~1image/get/tags/0").asText()).isEqualTo("Snapshots");
        assertThat(doc.at("/paths/~1api~1v1~1gc~1runs/post/tags/0").asText()).isEqualTo("GC");
        assertThat(doc.path("tags").findValuesAsText("name")).containsAll(TAGS);
    }

    @Test
    void responses_everyOperationHasProblemDetailErrors() {
        List<String> wrong = new ArrayList<>();
        for (Map.Entry<String, JsonNode> op : apiOperations()) {
            JsonNode responses = op.getValue().path("responses");
            boolean problem4xx = false;
            for (Iterator<String> codes = responses.fieldNames(); codes.hasNext(); ) {
                String code = codes.next();
                if (code.startsWith("4") || code.startsWith("5")) {
                    String ref = responses.path(code).at("/content/application~1problem+json/schema/$ref").asText();
                    if (!ref.equals("#/components/schemas/Problem")) {
                        wrong.add(op.getKey() + " " + code + " is not a problem detail: " + responses.path(code));
                    }
                    problem4xx |= code.startsWith("4");
                }
            }
            if (!problem4xx || !responses.has("500")) {
                wrong.add(op.getKey() + " has no 4xx or no 500 problem response: " + responses.fieldNames());
            }
            if (op.getKey().startsWith("DELETE") && !responses.has("404")) {
                wrong.add(op.getKey() + " has no 404");
            }
            if (responses.toString().contains("\"*/*\"")) {
                wrong.add(op.getKey() + " documents */* instead of a media type");
            }
        }
        assertThat(wrong).isEmpty();
        assertThat(doc.at("/components/schemas/Problem/properties/type/type").asText()).isEqualTo("string");
    }

    @Test
    void image_octetStreamWithRangesAndNotSatisfiable() {
        JsonNode r = doc.at("/paths/~1api~1v1~1volumes~1{name}~1snapshots~1{snapshot}~1image/get/responses");
        assertThat(r.at("/200/content/application~1octet-stream/schema/format").asText()).isEqualTo("binary");
        assertThat(r.has("206")).isTrue();
        assertThat(r.has("416")).isTrue();
        assertThat(r.has("404")).isTrue();
    }

    @Test
    void schemas_referenceTypesNullablePrimitivesNot() {
        JsonNode hold = doc.at("/components/schemas/HoldView/properties");
        assertThat(hold.at("/expiryMillis/type").toString()).as("Long").contains("\"null\"");
        assertThat(hold.at("/lockMode/type").toString()).as("String").contains("\"null\"");
        assertThat(hold.at("/sequence/type").toString()).as("long").doesNotContain("null");
        assertThat(hold.at("/held/type").toString()).as("boolean").doesNotContain("null");
    }
}
