package org.holdfast.server.api;

import com.fasterxml.jackson.databind.JsonNode;
import jakarta.servlet.http.HttpServletRequest;
import java.time.Instant;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import org.holdfast.common.id.SnapshotId;
import org.holdfast.common.id.VolumeId;
import org.holdfast.server.app.OnStandaloneOrMaster;
import org.holdfast.server.catalog.UnknownVolumeException;
import org.holdfast.server.store.BadBlocks;
import org.holdfast.server.verify.DamageReport;
import org.holdfast.server.verify.DurationText;
import org.holdfast.server.verify.Verifier;
import org.holdfast.server.verify.VerifyJobs;
import org.holdfast.server.verify.VerifyScope;
import org.holdfast.server.verify.VerifySettings;
import org.springframework.context.annotation.Conditional;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * Verification: starts verify passes as jobs (everything, one volume or one snapshot; 202 with the
 * job's URL) and answers the state of the store's integrity: bad blocks, flagged volumes, settings
 * and the last pass. Per-snapshot results are in the snapshot details ({@code verification}).
 */
@RestController
@Conditional(OnStandaloneOrMaster.class)
public class VerifyController {
    private static final Set<String> FIELDS = Set.of("volume", "snapshot", "full");

    private final VerifyJobs verifyJobs;
    private final DamageReport damage;

    public VerifyController(VerifyJobs verifyJobs, DamageReport damage) {
        this.verifyJobs = verifyJobs;
        this.damage = damage;
    }

    /**
     * Body of a verify request, all optional: {@code snapshot} is an id ({@code db01@3}) or a sequence and needs
     * {@code volume}; {@code full} reads every block, also those found sound within {@code holdfast.verify.window}.
     */
    public record VerifyRequest(String volume, String snapshot, Boolean full) {
    }

    /** One bad block: its PBN, data log, what was wrong and when it was found (ISO-8601). */
    public record BadBlockView(long pbn, String file, String problem, String foundAt) {
        static BadBlockView of(BadBlocks.BadBlock b) {
            return new BadBlockView(b.pbn(), b.file(), b.problem(), Instant.ofEpochMilli(b.foundAtMillis()).toString());
        }
    }

    /** Verify settings in the operator's syntax ({@code 30d}); {@code schedule} null when off, {@code bytesPerSecond} 0 for no limit. */
    public record SettingsView(int threads, long bytesPerSecond, String window, String schedule) {
        static SettingsView of(VerifySettings s) {
            return new SettingsView(s.threads(), s.bytesPerSecond(), DurationText.of(s.window()), DurationText.of(s.schedule()));
        }
    }

    /** The integrity of the store: bad blocks (at most 1000 listed), flagged volumes, settings, the last pass since start. */
    public record VerifyStatus(int badBlockCount, List<BadBlockView> badBlocks, List<DamageReport.VolumeDamage> damagedVolumes,
                               SettingsView settings, String lastRunEndedAt, Verifier.Report lastRun) {
    }

    /** Starts a verify pass as a job; 404 for an unknown volume or snapshot, 400 for a malformed body (nothing starts). */
    @PostMapping("/api/v1/verify")
    @Audited("verify.start")
    @io.swagger.v3.oas.annotations.parameters.RequestBody(required = false, content = @io.swagger.v3.oas.annotations.media.Content(
            schema = @io.swagger.v3.oas.annotations.media.Schema(implementation = VerifyRequest.class)))
    public ResponseEntity<JobView> start(@RequestBody(required = false) JsonNode body, HttpServletRequest request) {
        VerifyScope scope = scope(body);
        return JobController.accepted(verifyJobs.submit(scope, full(body), Principals.name(request)));
    }

    @GetMapping("/api/v1/verify")
    public VerifyStatus status() {
        List<BadBlocks.BadBlock> bad = damage.badBlocks().all();
        long ended = verifyJobs.lastEndedMillis();
        return new VerifyStatus(bad.size(), bad.stream().limit(1000).map(BadBlockView::of).toList(), damage.damagedVolumes(),
                SettingsView.of(verifyJobs.verifier().settings()), ended == 0 ? null : Instant.ofEpochMilli(ended).toString(),
                verifyJobs.lastReport());
    }

    private static boolean full(JsonNode body) {
        JsonNode f = body == null || !body.isObject() ? null : body.get("full");
        if (f == null || f.isNull()) {
            return false;
        }
        if (!f.isBoolean()) {
            throw new IllegalArgumentException("field 'full' must be true or false, got " + f.getNodeType().name().toLowerCase());
        }
        return f.booleanValue();
    }

    private static VerifyScope scope(JsonNode body) {
        if (body == null || body.isNull()) {
            return VerifyScope.all();
        }
        if (!body.isObject()) {
            throw new IllegalArgumentException("the body must be a JSON object like {\"volume\": \"db01\", \"snapshot\": \"db01@3\", \"full\": true}"
                    + " (all optional: none verifies everything, skipping blocks found sound within the window)");
        }
        for (Iterator<String> it = body.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!FIELDS.contains(f)) {
                throw new IllegalArgumentException("unknown field '" + f + "'; this call takes " + FIELDS.stream().sorted().toList());
            }
        }
        String volume = null;
        JsonNode v = body.get("volume");
        if (v != null && !v.isNull()) {
            if (!v.isTextual()) {
                throw new IllegalArgumentException("field 'volume' must be a string, got " + v.getNodeType().name().toLowerCase());
            }
            volume = v.asText();
            if (!VolumeId.isValid(volume)) {
                throw new UnknownVolumeException(volume);
            }
        }
        JsonNode s = body.get("snapshot");
        if (s == null || s.isNull()) {
            return new VerifyScope(volume, null);
        }
        if (!s.isTextual() && !s.isIntegralNumber()) {
            throw new IllegalArgumentException("field 'snapshot' must be a snapshot id like \"db01@3\" or a sequence number");
        }
        String text = s.asText();
        if (volume == null) {
            int at = text.lastIndexOf('@');
            if (at <= 0) {
                throw new IllegalArgumentException("a snapshot sequence needs 'volume' (or give the id, like \"db01@3\")");
            }
            volume = text.substring(0, at);
            if (!VolumeId.isValid(volume)) {
                throw new UnknownVolumeException(volume);
            }
        }
        return new VerifyScope(volume, SnapshotId.parse(text, new VolumeId(volume)).sequence());
    }
}
