package org.holdfast.server.api;

import org.holdfast.server.app.OnStandaloneOrMaster;
import org.holdfast.server.verify.DamageReport;
import com.fasterxml.jackson.databind.JsonNode;
import jakarta.servlet.http.HttpServletRequest;
import java.net.URI;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import org.holdfast.common.id.VolumeId;
import org.holdfast.gc.retention.RetentionExplainer;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.gc.GcService;
import org.holdfast.server.gc.VolumeGate;
import org.holdfast.server.security.AccessPrincipal;
import org.holdfast.server.volumes.VolumeAdmin;
import org.springframework.context.annotation.Conditional;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PatchMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * Volumes: create (before the first backup), list (paged, filtered by name), details (settings,
 * usage, last backup), change policy and quota, delete (through the GC). Snapshots:
 * {@link SnapshotController}.
 */
@RestController
@Conditional(OnStandaloneOrMaster.class)
@RequestMapping("/api/v1/volumes")
public class VolumeController {
    private static final Set<String> CREATE_FIELDS = Set.of("name", "blockSize", "policy", "policyName", "domain", "quotaBytes");
    private static final Set<String> UPDATE_FIELDS = Set.of("policy", "policyName", "quotaBytes");
    /** Block size of a volume created without one: the agent's default. */
    static final int DEFAULT_BLOCK_SIZE = 4096;

    private final Catalog catalog;
    private final GcService gc;
    private final VolumeGate gate;
    private final VolumeAdmin admin;
    private final DamageReport damage;

    public VolumeController(Catalog catalog, GcService gc, VolumeGate gate, VolumeAdmin admin, DamageReport damage) {
        this.catalog = catalog;
        this.gc = gc;
        this.gate = gate;
        this.admin = admin;
        this.damage = damage;
    }

    /** Body of a create call (the schema; the controller reads it strictly, unknown fields are refused). */
    public record CreateVolumeRequest(String name, Integer blockSize, String policy, String policyName, String domain, Long quotaBytes) {
    }

    /** Body of a PATCH: each field given is changed, {@code "quotaBytes": null} removes the quota. */
    public record UpdateVolumeRequest(String policy, String policyName, Long quotaBytes) {
    }

    /**
     * Creates an empty volume (201, Location: its URL). Its first backup must use its block size (an
     * agent without --block-size takes it). 409 if it exists or a backup is creating it; a dedup
     * domain other than the default needs an admin.
     */
    @PostMapping
    @Audited("volume.create")
    @io.swagger.v3.oas.annotations.parameters.RequestBody(content = @io.swagger.v3.oas.annotations.media.Content(
            schema = @io.swagger.v3.oas.annotations.media.Schema(implementation = CreateVolumeRequest.class)))
    public ResponseEntity<VolumeDetailsView> create(@RequestBody JsonNode body, HttpServletRequest request) {
        requireObject(body, CREATE_FIELDS, "{\"name\": \"db01\", \"blockSize\": 4096, \"policy\": \"30d\", \"quotaBytes\": 107374182400}");
        String name = text(body, "name", true);
        request.setAttribute(AuditFilter.TARGET_ATTRIBUTE, "volume:" + name);
        Long blockSize = integer(body, "blockSize");
        String domain = text(body, "domain", false);
        if (domain != null) {
            Principals.requireAdmin(request, "placing a volume in a dedup domain");
        }
        if (blockSize != null && (blockSize < Integer.MIN_VALUE || blockSize > Integer.MAX_VALUE)) {
            throw new IllegalArgumentException("blockSize " + blockSize + " is not a power of two from 512 to 1048576");
        }
        String policyName = namedPolicy(body);
        VolumeRecord v = admin.create(new VolumeAdmin.CreateRequest(name, blockSize == null ? DEFAULT_BLOCK_SIZE : blockSize.intValue(),
                text(body, "policy", false), domain, integer(body, "quotaBytes")));
        if (policyName != null) {
            gc.namedPolicies().assignName(v.name(), policyName);
        }
        return ResponseEntity.created(URI.create("/api/v1/volumes/" + v.name().name()))
                .body(VolumeDetailsView.of(admin.details(v.name(), true)));
    }

    /**
     * Volumes in name order, {@code limit} (1..1000, default 100) from {@code offset} (default 0),
     * only those whose name contains {@code name} (any case) if given. The body is the array; the
     * header {@code X-Total-Count} says how many matched, and {@code Link: <...>; rel="next"} points
     * at the next page while there is one.
     */
    @GetMapping
    public ResponseEntity<List<VolumeView>> volumes(@RequestParam(required = false) Integer offset,
                                                    @RequestParam(required = false) Integer limit,
                                                    @RequestParam(required = false) String name) {
        // an agent token lists only the volumes of its scope; others are not mentioned at all
        AccessPrincipal caller = Caller.principal();
        VolumeAdmin.Page page = admin.list(v -> caller == null || caller.mayReach(v), name == null || name.isEmpty() ? null : name,
                offset == null ? 0 : offset, limit == null ? VolumeAdmin.DEFAULT_LIMIT : limit);
        ResponseEntity.BodyBuilder r = ResponseEntity.ok().header("X-Total-Count", Integer.toString(page.total()));
        long next = (long) page.offset() + page.limit();
        if (next < page.total()) {
            String filter = name == null || name.isEmpty() ? "" : "&name=" + java.net.URLEncoder.encode(name, java.nio.charset.StandardCharsets.UTF_8);
            r.header("Link", "</api/v1/volumes?offset=" + next + "&limit=" + page.limit() + filter + ">; rel=\"next\"");
        }
        return r.body(page.volumes().stream().map(VolumeView::of).toList());
    }

    /**
     * A volume with its settings, last backup and storage figures. The figures come from a scan of
     * the map of every volume in its dedup domain, cached until a snapshot is committed or deleted;
     * {@code ?usage=false} leaves them out (null).
     */
    @GetMapping("/{name}")
    public VolumeDetailsView volume(@PathVariable String name, @RequestParam(required = false, defaultValue = "true") boolean usage) {
        VolumeId v = PathIds.volumeId(name);
        return VolumeDetailsView.of(admin.details(v, usage)).withDamage(damage.volume(catalog.requireVolume(v)));
    }

    /** Changes the policy and/or the quota; answers the details. Nothing changes if any field is invalid. */
    @PatchMapping("/{name}")
    @Audited("volume.update")
    @io.swagger.v3.oas.annotations.parameters.RequestBody(content = @io.swagger.v3.oas.annotations.media.Content(
            schema = @io.swagger.v3.oas.annotations.media.Schema(implementation = UpdateVolumeRequest.class)))
    public VolumeDetailsView update(@PathVariable String name, @RequestBody JsonNode body) {
        VolumeId v = PathIds.volumeId(name);
        catalog.requireVolume(v);
        requireObject(body, UPDATE_FIELDS, "{\"policy\": \"keep-last=3,daily=7\", \"quotaBytes\": 107374182400} (null removes the quota)");
        if (body.isEmpty()) {
            throw new IllegalArgumentException("nothing to change: give \"policy\", \"policyName\" and/or \"quotaBytes\"");
        }
        if (body.has("policy") && body.get("policy").isNull() || body.has("policyName") && body.get("policyName").isNull()) {
            throw new IllegalArgumentException("policy cannot be removed, only replaced (e.g. \"30d\")");
        }
        String policy = text(body, "policy", false);
        String policyName = namedPolicy(body);
        Long quota = integer(body, "quotaBytes");
        if (quota != null && quota < 0) {
            throw new IllegalArgumentException("quotaBytes must be 0 or more, got " + quota);
        }
        if (policyName != null) {
            gc.namedPolicies().assignName(v, policyName);
        }
        admin.update(v, policy, body.has("quotaBytes"), quota);
        return VolumeDetailsView.of(admin.details(v, true)).withDamage(damage.volume(catalog.requireVolume(v)));
    }

    /**
     * The named retention policy the body assigns ({@code policyName}), checked to exist before anything
     * changes; null if none. A body may give the policy as text or by name, not both.
     */
    private String namedPolicy(JsonNode body) {
        String policyName = text(body, "policyName", false);
        if (policyName == null) {
            return null;
        }
        if (text(body, "policy", false) != null) {
            throw new IllegalArgumentException("give \"policy\" (text, e.g. \"30d\") or \"policyName\" (a named policy), not both");
        }
        gc.namedPolicies().get(policyName); // 404 unknown-policy before anything is created or changed
        return policyName;
    }

    /**
     * Deletes a volume with all its snapshots (operator request). 409 while a backup of it is in
     * progress or any of its snapshots is held. Takes time in proportion to the volume's size.
     */
    @DeleteMapping("/{name}")
    @Audited("volume.delete")
    @NeedsGcBookkeeping
    public GcService.VolumeDeletion deleteVolume(@PathVariable String name) {
        VolumeId v = PathIds.volumeId(name);
        long internalId = catalog.requireVolume(v).internalId();
        GcService.VolumeDeletion d = gc.deleteVolume(v, gate);
        try {
            admin.forget(internalId);
        } catch (RuntimeException e) {
            // the volume is deleted; its settings only linger under an internal id that is never reused
            org.slf4j.LoggerFactory.getLogger(VolumeController.class).warn("volume '{}' is deleted, but its settings could not be"
                    + " dropped: {}", name, e.getMessage());
        }
        return d;
    }


    private static void requireObject(JsonNode body, Set<String> fields, String example) {
        if (body == null || !body.isObject()) {
            throw new IllegalArgumentException("the body must be a JSON object like " + example);
        }
        for (Iterator<String> it = body.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!fields.contains(f)) {
                throw new IllegalArgumentException("unknown field '" + f + "'; this call takes " + fields.stream().sorted().toList());
            }
        }
    }

    /** A string field; null if absent or JSON null (then 400 if {@code required}); 400 for another type. */
    private static String text(JsonNode body, String field, boolean required) {
        JsonNode n = body.get(field);
        if (n == null || n.isNull()) {
            if (required) {
                throw new IllegalArgumentException("field '" + field + "' is required");
            }
            return null;
        }
        if (!n.isTextual()) {
            throw new IllegalArgumentException("field '" + field + "' must be a string, got " + n.getNodeType().name().toLowerCase());
        }
        return n.asText();
    }

    /** A whole-number field; null if absent or JSON null; 400 for a fraction, a string or a number past 64 bits. */
    private static Long integer(JsonNode body, String field) {
        JsonNode n = body.get(field);
        if (n == null || n.isNull()) {
            return null;
        }
        if (!n.isIntegralNumber() || !n.canConvertToLong()) {
            throw new IllegalArgumentException("field '" + field + "' must be a whole number of at most 64 bits, got " + n);
        }
        return n.asLong();
    }
}
