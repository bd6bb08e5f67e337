package org.holdfast.server.api;

import io.swagger.v3.oas.models.OpenAPI;
import io.swagger.v3.oas.models.Operation;
import io.swagger.v3.oas.models.PathItem;
import io.swagger.v3.oas.models.media.BinarySchema;
import io.swagger.v3.oas.models.media.Content;
import io.swagger.v3.oas.models.media.IntegerSchema;
import io.swagger.v3.oas.models.media.MediaType;
import io.swagger.v3.oas.models.media.ObjectSchema;
import io.swagger.v3.oas.models.media.Schema;
import io.swagger.v3.oas.models.media.StringSchema;
import io.swagger.v3.oas.models.responses.ApiResponse;
import io.swagger.v3.oas.models.responses.ApiResponses;
import io.swagger.v3.oas.models.security.SecurityRequirement;
import io.swagger.v3.oas.models.tags.Tag;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.type.TypeFactory;
import io.swagger.v3.oas.models.media.JsonSchema;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.springdoc.core.customizers.OpenApiCustomizer;
import org.springdoc.core.customizers.PropertyCustomizer;

/**
 * Conventions applied to every operation of the OpenAPI document, so that a new controller gets
 * them without annotations:
 * <ul>
 *   <li><b>tags</b> from the path ({@link #TAGS}, first match): the resource, not the controller
 *       class (no more {@code gc-controller});</li>
 *   <li><b>security</b>: the {@value #BEARER} scheme on every {@code /api/v1} operation but login and the image
 *       download through a link (the link is the credential);</li>
 *   <li><b>error responses</b> as {@code application/problem+json} {@value #PROBLEM} where they
 *       apply: 400 (parameters or a body), 401 and 403 (secured), 404 (a path variable), 409 (a
 *       change), 413 and 415 (a body), 429 (login), 500 (always);</li>
 *   <li><b>nullable</b>: a property of a reference type (String, Long, a record, a list) may be null
 *       in the JSON the API sends (a snapshot without a lock has {@code "lockMode": null}), so its
 *       type also admits {@code null} (OpenAPI 3.1); only primitives never are ({@link #nullableProperties()} learns which are which);</li>
 *   <li><b>content types</b>: a success body Spring left as {@code *}{@code /*} is
 *       {@code application/json}; the image download is {@code application/octet-stream} with 206 and 416.</li>
 * </ul>
 * Responses an operation declares itself are kept.
 */
public final class OpenApiConventions implements OpenApiCustomizer {
    /** The security scheme's name in components. */
    public static final String BEARER = "bearer";
    /** The problem detail schema's name in components. */
    public static final String PROBLEM = "Problem";

    /** Path prefix to tag, first match wins; the order puts nested resources before their parents. */
    static final List<Map.Entry<String, String>> TAGS = List.of(
            Map.entry("/api/v1/volumes/{name}/snapshots", "Snapshots"),
            Map.entry("/api/v1/volumes/{volume}/snapshots", "Snapshots"),
            Map.entry("/api/v1/volumes/{name}/retention", "Retention"),
            Map.entry("/api/v1/volumes/{volume}/retention", "Retention"),
            Map.entry("/api/v1/volumes/{name}/policy", "Retention"),
            Map.entry("/api/v1/volumes/{volume}/policy", "Retention"),
            Map.entry("/api/v1/volumes", "Volumes"),
            Map.entry("/api/v1/snapshots", "Snapshots"),
            Map.entry("/api/v1/retention", "Retention"),
            Map.entry("/api/v1/policies", "Retention"),
            Map.entry("/api/v1/jobs", "Jobs"),
            Map.entry("/api/v1/verify", "Verify"),
            Map.entry("/api/v1/gc", "GC"),
            Map.entry("/api/v1/stats", "Stats"),
            Map.entry("/api/v1/agents", "Agents"),
            Map.entry("/api/v1/server", "Agents"),
            Map.entry("/api/v1/backups", "Agents"),
            Map.entry("/api/v1/users", "Users"),
            Map.entry("/api/v1/tokens", "Tokens"),
            Map.entry("/api/v1/auth", "Auth"),
            Map.entry("/api/v1/audit", "Audit"),
            Map.entry("/api/v1/cluster", "Cluster"),
            Map.entry("/api/v1/catalog", "Catalog"));

    /** The tags in the order the document lists them, with a line each. */
    static final Map<String, String> TAG_DESCRIPTIONS = new LinkedHashMap<>();

    static {
        TAG_DESCRIPTIONS.put("Volumes", "Protected volumes: list, details, create, update, delete");
        TAG_DESCRIPTIONS.put("Snapshots", "A volume's snapshots: list, details, holds and locks, deletion, raw image download");
        TAG_DESCRIPTIONS.put("Retention", "Retention policies, their assignment to volumes and the prune simulator");
        TAG_DESCRIPTIONS.put("Jobs", "Long operations (GC, compaction, reclaim, fsck, verify) as jobs with progress");
        TAG_DESCRIPTIONS.put("Verify", "Verify passes over stored blocks, bad blocks and damaged volumes");
        TAG_DESCRIPTIONS.put("GC", "Garbage collection: runs, status, the checker");
        TAG_DESCRIPTIONS.put("Stats", "Capacity, dedup and compression figures, daily series");
        TAG_DESCRIPTIONS.put("Agents", "Agent connections the server has seen, the backups running now, and what an agent needs to reach the server");
        TAG_DESCRIPTIONS.put("Users", "Console users (admin only)");
        TAG_DESCRIPTIONS.put("Tokens", "API tokens (admin only)");
        TAG_DESCRIPTIONS.put("Auth", "Console login, logout and the caller's identity");
        TAG_DESCRIPTIONS.put("Audit", "The audit log (admin only)");
        TAG_DESCRIPTIONS.put("Cluster", "Master/worker mode (preview): this node's role, and the workers a master knows");
        TAG_DESCRIPTIONS.put("Catalog", "Online backups of the catalog, what a lost server is recovered from (admin only)");
    }

    /** "Schema.property" of every property of a reference type, as the model resolver met them. */
    private final Set<String> nullable = ConcurrentHashMap.newKeySet();

    /** Records which model properties are of a reference type; springdoc calls it while it resolves models. */
    public PropertyCustomizer nullableProperties() {
        return (property, type) -> {
            if (property != null && type != null && type.getParent() != null && type.getPropertyName() != null && type.getType() != null) {
                JavaType t = type.getType() instanceof JavaType j ? j : TypeFactory.defaultInstance().constructType(type.getType());
                if (!t.isPrimitive()) {
                    nullable.add(type.getParent().getName() + "." + type.getPropertyName());
                }
            }
            return property;
        };
    }

    @Override
    public void customise(OpenAPI api) {
        if (api.getComponents().getSchemas() != null) {
            api.getComponents().getSchemas().forEach(this::markNullable);
        }
        Schema<?> problem = new ObjectSchema()
                .description("An RFC 9457 problem detail; `type` is one of the stable URNs in docs/api.md, other members may follow")
                .addProperty("type", new StringSchema().format("uri-reference"))
                .addProperty("title", new StringSchema())
                .addProperty("status", new IntegerSchema())
                .addProperty("detail", new StringSchema())
                .addProperty("instance", new StringSchema().format("uri-reference"));
        problem.setAdditionalProperties(Boolean.TRUE);
        api.getComponents().addSchemas(PROBLEM, problem);
        if (api.getPaths() == null) {
            return;
        }
        api.getPaths().forEach((path, item) -> item.readOperationsMap().forEach((method, op) -> apply(path, method, op)));
        List<Tag> tags = new ArrayList<>();
        TAG_DESCRIPTIONS.forEach((name, description) -> tags.add(new Tag().name(name).description(description)));
        // tags another controller brought that the conventions do not know (kept, listed after ours)
        if (api.getTags() != null) {
            api.getTags().stream().filter(t -> !TAG_DESCRIPTIONS.containsKey(t.getName())).forEach(tags::add);
        }
        api.setTags(tags);
    }

    private void apply(String path, PathItem.HttpMethod method, Operation op) {
        if (!path.startsWith("/api/")) {
            return;
        }
        String tag = tagOf(path);
        if (tag != null) {
            op.setTags(new ArrayList<>(List.of(tag)));
        }
        boolean login = path.equals("/api/v1/auth/login") && method == PathItem.HttpMethod.POST;
        boolean read = method == PathItem.HttpMethod.GET || method == PathItem.HttpMethod.HEAD;
        boolean hasBody = op.getRequestBody() != null;
        boolean hasParameters = op.getParameters() != null && !op.getParameters().isEmpty();
        // the image through a download link: the link in the query is the credential, no header
        boolean linked = path.endsWith("/image/download") && read;
        if (!login && !linked) {
            op.setSecurity(new ArrayList<>(List.of(new SecurityRequirement().addList(BEARER))));
        }
        ApiResponses responses = op.getResponses() == null ? new ApiResponses() : op.getResponses();
        op.setResponses(responses);
        responses.forEach((code, r) -> jsonInsteadOfAnything(r));
        if ((path.endsWith("/image") || linked) && read) {
            image(responses);
        }
        if (hasBody || hasParameters) {
            problem(responses, "400", "Invalid request: a malformed body or a value of the wrong type or range");
        }
        if (linked) {
            problem(responses, "403", "Invalid download link: missing, altered, expired, for another snapshot, or its holder"
                    + " lost the right (invalid-download-link)");
        } else if (!login) {
            problem(responses, "401", "No token, or a malformed, unknown, expired or revoked one");
            if (!path.startsWith("/api/v1/auth/")) {
                problem(responses, "403", "The token's role may not do this");
            }
        } else {
            problem(responses, "401", "Wrong user name or password");
            problem(responses, "429", "Too many failed logins; Retry-After says when to try again");
        }
        if (path.contains("{")) {
            problem(responses, "404", "Unknown volume, snapshot or other resource named in the path");
        }
        if (!read && !path.startsWith("/api/v1/auth/")) {
            problem(responses, "409", "Refused by a rule (a hold or lock, a backup in progress, a duplicate, a policy in use)");
        }
        if (path.startsWith("/api/v1/cluster/")) {
            problem(responses, "409", "Not a master: only a master lists workers (not-a-master)");
        }
        if (hasBody) {
            problem(responses, "413", "The body is over 1 MiB");
            problem(responses, "415", "The body is not application/json");
        }
        problem(responses, "500", "A failure the server did not expect, or corrupt data (run the checker)");
    }

    @SuppressWarnings({"rawtypes", "unchecked"})
    private void markNullable(String name, Schema<?> schema) {
        Map<String, Schema> properties = schema.getProperties();
        if (properties == null) {
            return;
        }
        for (Map.Entry<String, Schema> e : properties.entrySet()) {
            if (!nullable.contains(name + "." + e.getKey()) || (schema.getRequired() != null && schema.getRequired().contains(e.getKey()))) {
                continue;
            }
            Schema p = e.getValue();
            if (p.get$ref() != null) {
                e.setValue(new JsonSchema().anyOf(List.of(new JsonSchema().$ref(p.get$ref()), new JsonSchema().types(Set.of("null")))));
            } else if (p.getTypes() != null && !p.getTypes().isEmpty()) {
                Set<String> types = new LinkedHashSet<>(p.getTypes());
                types.add("null");
                p.setTypes(types);
            } else if (p.getType() != null) { // an OpenAPI 3.0 document
                p.setNullable(true);
            }
        }
    }

    /** The convention's tag of {@code path}, or null to keep the operation's own. */
    static String tagOf(String path) {
        for (Map.Entry<String, String> e : TAGS) {
            if (path.equals(e.getKey()) || path.startsWith(e.getKey() + "/")) {
                return e.getValue();
            }
        }
        return null;
    }

    private static void problem(ApiResponses responses, String code, String description) {
        if (responses.containsKey(code)) {
            ApiResponse r = responses.get(code);
            if (r.getContent() == null || r.getContent().isEmpty() || r.getContent().containsKey("application/json")) {
                r.setContent(problemContent()); // a handler's ProblemDetail, shown as the problem schema
            }
            return;
        }
        responses.addApiResponse(code, new ApiResponse().description(description).content(problemContent()));
    }

    private static Content problemContent() {
        return new Content().addMediaType("application/problem+json",
                new MediaType().schema(new Schema<>().$ref("#/components/schemas/" + PROBLEM)));
    }

    /** Spring documents a body without {@code produces} as {@code *}{@code /*}; the API sends JSON. */
    private static void jsonInsteadOfAnything(ApiResponse r) {
        if (r.getContent() != null && r.getContent().containsKey("*/*")) {
            MediaType m = r.getContent().remove("*/*");
            r.getContent().addMediaType("application/json", m);
        }
    }

    private static void image(ApiResponses responses) {
        Content bytes = new Content().addMediaType("application/octet-stream", new MediaType().schema(new BinarySchema()));
        responses.addApiResponse("200", new ApiResponse().description("The whole image").content(bytes));
        responses.addApiResponse("206", new ApiResponse().description("The byte range the Range header asked for (Content-Range)")
                .content(bytes));
        problem(responses, "416", "The range starts past the end of the image (Content-Range: bytes */length)");
    }
}
