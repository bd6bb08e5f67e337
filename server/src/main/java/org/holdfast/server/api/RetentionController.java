package org.holdfast.server.api;

import jakarta.servlet.http.HttpServletRequest;
import java.net.URI;
import java.time.Clock;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.holdfast.common.id.VolumeId;
import org.holdfast.gc.retention.RetentionExplainer;
import org.holdfast.gc.retention.RetentionPolicy;
import org.holdfast.server.app.OnStandaloneOrMaster;
import org.holdfast.server.gc.GcService;
import org.holdfast.server.gc.NamedPolicies;
import org.springframework.context.annotation.Conditional;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * Retention: named policies ({@code /api/v1/retention/policies}), each volume's policy
 * ({@code /api/v1/volumes/{name}/retention}, as text or by name) and the prune simulator
 * ({@code /api/v1/retention/simulate}). Policies are shown as the user writes them ({@code 30d},
 * {@code keep-last=3,daily=7}), times as ISO-8601.
 */
@RestController
@Conditional(OnStandaloneOrMaster.class)
@NeedsGcBookkeeping
public class RetentionController {
    /** Most snapshot times one simulation takes. */
    public static final int MAX_SIMULATED_TIMES = 10_000;

    private final GcService gc;
    private final Clock clock;

    public RetentionController(GcService gc, Clock holdfastClock) {
        this.gc = gc;
        this.clock = holdfastClock;
    }

    /** A named policy; {@code builtIn} for the configured default; times ISO-8601 (null for the built-in). */
    public record PolicyView(String name, String policy, String description, boolean builtIn, List<String> volumes,
                             String createdAt, String updatedAt) {
        static PolicyView of(NamedPolicies.NamedPolicy p) {
            return new PolicyView(p.name(), p.policy(), p.description(), p.builtIn(), p.volumes(), iso(p.createdMillis()),
                    iso(p.updatedMillis()));
        }
    }

    /** Body of a create or update: {@code {"name": "gold", "policy": "keep-last=3,daily=7", "description": "..."}}. */
    public record PolicyRequest(String name, String policy, String description) {
    }

    /**
     * A volume's retention: the policy text, and the named policy it follows ({@code null} when set as
     * text; {@code default} when it follows the server's default).
     */
    public record RetentionView(String volume, String policy, String name) {
        static RetentionView of(NamedPolicies.Assignment a) {
            return new RetentionView(a.volume(), a.policy(), a.name());
        }
    }

    /** Body of a volume's retention change: exactly one of {@code policy} (text) and {@code name} (a named policy). */
    public record RetentionRequest(String policy, String name) {
    }

    /**
     * A simulation: exactly one of {@code policy} (text) and {@code name}, exactly one of {@code volume}
     * (its snapshots) and {@code times} (ISO-8601 instants, at most {@value #MAX_SIMULATED_TIMES}), and
     * optionally {@code now} (ISO-8601; default the server's time).
     */
    public record SimulateRequest(String policy, String name, String volume, List<String> times, String now) {
    }

    /** One snapshot in a simulation; {@code expiry} null means it never expires by itself. */
    public record SimulatedSnapshot(String time, Long sequence, boolean kept, String rule, String expiry) {
    }

    /** What the simulated policy keeps at {@code now}. */
    public record SimulationView(String policy, String name, String volume, String now, int kept, int removed,
                                 List<SimulatedSnapshot> snapshots) {
    }

    @GetMapping("/api/v1/retention/policies")
    public List<PolicyView> policies() {
        return gc.namedPolicies().list().stream().map(PolicyView::of).toList();
    }

    /** Creates a named policy: 201 with its URL; 409 if the name is taken. */
    @PostMapping("/api/v1/retention/policies")
    @Audited("policy.create")
    public ResponseEntity<PolicyView> create(@RequestBody PolicyRequest body, HttpServletRequest request) {
        if (body != null && body.name() != null) {
            request.setAttribute(AuditFilter.TARGET_ATTRIBUTE, "policy:" + body.name()); // the path does not name it
        }
        if (body == null || body.name() == null || body.policy() == null) {
            throw new IllegalArgumentException("body must be {\"name\": \"gold\", \"policy\": \"keep-last=3,daily=7\","
                    + " \"description\": \"optional\"}");
        }
        NamedPolicies.NamedPolicy p = gc.namedPolicies().create(body.name(), body.policy(), body.description());
        return ResponseEntity.created(URI.create("/api/v1/retention/policies/" + p.name())).body(PolicyView.of(p));
    }

    @GetMapping("/api/v1/retention/policies/{name}")
    public PolicyView policy(@PathVariable String name) {
        return PolicyView.of(gc.namedPolicies().get(name));
    }

    /** Changes a named policy; every volume assigned to it follows (409, nothing changed, if a compliance lock forbids). */
    @PutMapping("/api/v1/retention/policies/{name}")
    @Audited("policy.update")
    public PolicyView update(@PathVariable String name, @RequestBody PolicyRequest body) {
        if (body == null || body.policy() == null) {
            throw new IllegalArgumentException("body must be {\"policy\": \"keep-last=3,daily=7\", \"description\": \"optional\"}");
        }
        if (body.name() != null && !body.name().equals(name)) {
            throw new IllegalArgumentException("a policy cannot be renamed: the body's name '" + body.name()
                    + "' differs from '" + name + "' (create a new one and assign the volumes to it)");
        }
        return PolicyView.of(gc.namedPolicies().update(name, body.policy(), body.description()));
    }

    /** Deletes a named policy: 204; 409 while a volume is assigned to it, and for the built-in default. */
    @DeleteMapping("/api/v1/retention/policies/{name}")
    @Audited("policy.delete")
    public ResponseEntity<Void> delete(@PathVariable String name) {
        gc.namedPolicies().delete(name);
        return ResponseEntity.noContent().build();
    }

    @GetMapping("/api/v1/volumes/{name}/retention")
    public RetentionView retention(@PathVariable String name) {
        return RetentionView.of(gc.namedPolicies().assignment(PathIds.volumeId(name)));
    }

    /** Sets a volume's policy as text ({@code {"policy": "30d"}}) or assigns it to a named one ({@code {"name": "gold"}}). */
    @PutMapping("/api/v1/volumes/{name}/retention")
    @Audited("retention.set")
    public RetentionView setRetention(@PathVariable String name, @RequestBody RetentionRequest body) {
        if (body == null || (body.policy() == null) == (body.name() == null)) {
            throw new IllegalArgumentException("body must be {\"policy\": \"30d\"} (or a schedule like \"keep-last=3,daily=7\")"
                    + " or {\"name\": \"<named policy>\"}, not both");
        }
        VolumeId v = PathIds.volumeId(name);
        NamedPolicies named = gc.namedPolicies();
        return RetentionView.of(body.name() != null ? named.assignName(v, body.name()) : named.assignText(v, body.policy()));
    }

    /**
     * The prune simulator: which snapshots a policy keeps at {@code now}, by which rule and until when.
     * For a volume, its real snapshots with their holds and recorded expiries (what assigning the policy
     * now would leave: a policy never lowers an expiry); for a list of times, a clean history.
     */
    @PostMapping("/api/v1/retention/simulate")
    @Audited("retention.simulate") // changes nothing, but every POST is audited
    public SimulationView simulate(@RequestBody SimulateRequest body) {
        if (body == null || (body.policy() == null) == (body.name() == null)
                || (body.volume() == null) == (body.times() == null)) {
            throw new IllegalArgumentException("body must have exactly one of \"policy\" (text like \"keep-last=3,daily=7\")"
                    + " and \"name\" (a named policy), and exactly one of \"volume\" and \"times\" (ISO-8601 instants);"
                    + " \"now\" is optional");
        }
        long now = body.now() == null ? clock.millis() : instant("now", body.now());
        List<Long> times = body.times() == null ? null : times(body.times(), now); // checked before any lookup
        RetentionPolicy policy = body.name() != null ? gc.namedPolicies().resolve(body.name())
                : RetentionPolicy.parse(body.policy());
        List<SimulatedSnapshot> out = new ArrayList<>();
        if (times != null) {
            for (RetentionExplainer.Verdict v : new RetentionExplainer().explainTimes(policy, times, now)) {
                out.add(snapshot(v, null));
            }
        } else {
            for (Map.Entry<Long, RetentionExplainer.Verdict> e : gc.explain(PathIds.volumeId(body.volume()), policy, now).entrySet()) {
                out.add(snapshot(e.getValue(), e.getKey()));
            }
        }
        int kept = (int) out.stream().filter(SimulatedSnapshot::kept).count();
        return new SimulationView(policy.toString(), body.name(), body.volume(), Instant.ofEpochMilli(now).toString(), kept,
                out.size() - kept, out);
    }

    private static List<Long> times(List<String> given, long now) {
        if (given.size() > MAX_SIMULATED_TIMES) {
            throw new IllegalArgumentException("at most " + MAX_SIMULATED_TIMES + " times per simulation, got " + given.size()
                    + "; simulate a shorter history");
        }
        if (given.isEmpty()) {
            throw new IllegalArgumentException("\"times\" is empty: give at least one ISO-8601 instant");
        }
        List<Long> out = new ArrayList<>(given.size());
        for (String t : given) {
            long ms = instant("time", t);
            if (ms > now) {
                throw new IllegalArgumentException("time " + t + " is after now (" + Instant.ofEpochMilli(now)
                        + "): a snapshot cannot be taken in the future");
            }
            out.add(ms);
        }
        out.sort(null);
        return out;
    }

    private static SimulatedSnapshot snapshot(RetentionExplainer.Verdict v, Long sequence) {
        return new SimulatedSnapshot(Instant.ofEpochMilli(v.createdAt()).toString(), sequence, v.kept(), v.rule(),
                v.expiry() == Long.MAX_VALUE ? null : Instant.ofEpochMilli(v.expiry()).toString());
    }

    private static long instant(String field, String value) {
        try {
            return Instant.parse(value == null ? "" : value.trim()).toEpochMilli();
        } catch (DateTimeParseException | ArithmeticException e) { // ArithmeticException: a year past epoch millis
            throw new IllegalArgumentException(field + " '" + value + "' is not an ISO-8601 instant like 2026-03-01T10:00:00Z");
        }
    }

    private static String iso(long millis) {
        return millis == 0 ? null : Instant.ofEpochMilli(millis).toString();
    }
}
