package org.holdfast.server.gc;

import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import org.holdfast.common.id.VolumeId;
import org.holdfast.gc.retention.RetentionPolicy;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.PolicyStore;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.store.MetadataBatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Retention policies as named resources ({@code gold = keep-last=3,daily=7,weekly=4}) and the
 * assignment of volumes to them. A volume assigned to a name has that name's policy text as its own
 * ({@link RetentionPolicies}), so the commit path and the retention cycle need not know names at
 * all; changing a named policy changes every assigned volume through the same path as a per-volume
 * change (raised expiries, the compliance-lock check), and setting a volume's policy as text drops
 * its assignment. The built-in {@value #DEFAULT_NAME} is the server's configured default policy:
 * listed, assignable, never stored, changed only in the configuration, never deleted.
 *
 * <p>Crash safety: an assignment and the volume's policy text are written in one batch. Updating a
 * named policy writes the new text first, then each volume's; a crash between leaves volumes with the
 * old text, which {@link #reconcile} (at start) brings to the name's text. The same step applies a
 * changed configured default to the volumes assigned to {@value #DEFAULT_NAME}.
 *
 * <p>Lock: every change holds this object's monitor, then the commit monitor (inside
 * {@link RetentionPolicies}), so an assignment cannot slip in between the check "nothing assigned"
 * and the deletion of a name.
 */
public final class NamedPolicies {
    private static final Logger LOG = LoggerFactory.getLogger(NamedPolicies.class);
    /** Name of the built-in policy: the configured default ({@code holdfast.gc.default-retention}). */
    public static final String DEFAULT_NAME = "default";
    /** Longest description accepted (characters). */
    public static final int MAX_DESCRIPTION = 500;
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,63}");

    /** A named policy as the API shows it: text in the user's syntax, assigned volumes by name. */
    public record NamedPolicy(String name, String policy, String description, boolean builtIn, List<String> volumes,
                              long createdMillis, long updatedMillis) {
    }

    /** A volume's policy: its text, and the name it follows ({@code null} when set as text). */
    public record Assignment(String volume, String policy, String name) {
    }

    private final PolicyStore store;
    private final Catalog catalog;
    private final RetentionPolicies policies;
    private final String defaultPolicy;
    private final Clock clock;
    private final Supplier<Object> commitMonitor;

    NamedPolicies(PolicyStore store, Catalog catalog, RetentionPolicies policies, String defaultPolicy, Clock clock,
                  Supplier<Object> commitMonitor) {
        this.store = store;
        this.catalog = catalog;
        this.policies = policies;
        this.defaultPolicy = RetentionPolicy.parse(defaultPolicy).toString();
        this.clock = clock;
        this.commitMonitor = commitMonitor;
    }

    /** Every named policy, the built-in default first, then by name. */
    public List<NamedPolicy> list() {
        Map<String, List<String>> byName = assignedVolumes();
        List<NamedPolicy> out = new ArrayList<>();
        out.add(builtIn(byName));
        for (PolicyStore.Entry e : store.policies()) {
            out.add(view(e, byName));
        }
        return out;
    }

    /** The named policy; {@link UnknownPolicyException} if there is none. */
    public NamedPolicy get(String name) {
        Map<String, List<String>> byName = assignedVolumes();
        if (DEFAULT_NAME.equals(name)) {
            return builtIn(byName);
        }
        return view(store.policy(name).orElseThrow(() -> new UnknownPolicyException(name)), byName);
    }

    /** The policy a name stands for (for the simulator). */
    public RetentionPolicy resolve(String name) {
        return RetentionPolicy.parse(get(name).policy());
    }

    /** Creates a named policy; 409 if the name is taken (or is {@value #DEFAULT_NAME}). */
    public synchronized NamedPolicy create(String name, String policyText, String description) {
        checkName(name);
        String text = RetentionPolicy.parse(policyText).toString();
        String desc = checkDescription(description);
        if (DEFAULT_NAME.equals(name) || store.policy(name).isPresent()) {
            throw new GcConflictException("a retention policy named '" + name + "' exists already; change it with PUT or"
                    + " choose another name");
        }
        long now = clock.millis();
        write(b -> store.putPolicy(b, new PolicyStore.Entry(name, text, desc, now, now)));
        return get(name);
    }

    /**
     * Changes a named policy's text (and description) and applies the new text to every volume
     * assigned to it. Refused with nothing changed if any of them has a compliance lock the change
     * would shorten; 409 for the built-in default.
     */
    public synchronized NamedPolicy update(String name, String policyText, String description) {
        RetentionPolicy policy = RetentionPolicy.parse(policyText);
        String desc = checkDescription(description);
        if (DEFAULT_NAME.equals(name)) {
            throw new GcConflictException("the built-in policy '" + DEFAULT_NAME + "' is the server's configured default"
                    + " (holdfast.gc.default-retention); change it there, or create a named policy");
        }
        PolicyStore.Entry old = store.policy(name).orElseThrow(() -> new UnknownPolicyException(name));
        synchronized (commitMonitor.get()) {
            List<VolumeRecord> assigned = assigned(name);
            for (VolumeRecord v : assigned) {
                policies.check(v, policy); // every volume first: a refusal changes nothing
            }
            write(b -> store.putPolicy(b, new PolicyStore.Entry(name, policy.toString(), desc, old.createdMillis(),
                    clock.millis())));
            for (VolumeRecord v : assigned) {
                policies.set(v.name(), policy.toString());
            }
        }
        return get(name);
    }

    /** Deletes a named policy; 409 while any volume is assigned to it, and always for the built-in default. */
    public synchronized void delete(String name) {
        if (DEFAULT_NAME.equals(name)) {
            throw new GcConflictException("the built-in policy '" + DEFAULT_NAME + "' cannot be deleted");
        }
        store.policy(name).orElseThrow(() -> new UnknownPolicyException(name));
        List<String> volumes = assigned(name).stream().map(v -> v.name().name()).toList();
        if (!volumes.isEmpty()) {
            throw new GcConflictException("retention policy '" + name + "' is assigned to " + volumes.size() + " volume(s) "
                    + abbreviate(volumes) + "; assign them another policy first");
        }
        Map<Long, String> stale = store.assignments(); // of deleted volumes: they go with the name
        write(b -> {
            store.deletePolicy(b, name);
            stale.forEach((id, n) -> {
                if (n.equals(name)) {
                    store.deleteAssignment(b, id);
                }
            });
        });
    }

    /** The volume's policy text and the name it follows, if any. */
    public Assignment assignment(VolumeId volume) {
        VolumeRecord v = catalog.requireVolume(volume);
        String text = policies.policy(volume);
        Optional<String> name = store.assignment(v.internalId());
        return new Assignment(volume.name(), text, name.orElse(policies.explicit(v) ? null : DEFAULT_NAME));
    }

    /** Sets the volume's policy as text; it no longer follows a name. */
    public synchronized Assignment assignText(VolumeId volume, String policyText) {
        long id = catalog.requireVolume(volume).internalId();
        policies.set(volume, policyText, b -> store.deleteAssignment(b, id));
        return assignment(volume);
    }

    /** Assigns the volume to a named policy: it gets the name's text now and on every later change of it. */
    public synchronized Assignment assignName(VolumeId volume, String name) {
        long id = catalog.requireVolume(volume).internalId();
        String text = get(name).policy();
        policies.set(volume, text, b -> store.putAssignment(b, id, name));
        return assignment(volume);
    }

    /**
     * Brings every assigned volume to its name's current text: finishes an update a crash interrupted,
     * and applies a changed configured default. A volume a compliance lock keeps from a shorter text
     * keeps its own and is logged. Call it once at start, after {@link GcService#open} and once the
     * commit monitor exists (it changes policies under it); commits may run meanwhile.
     */
    public synchronized void reconcile() {
        Map<String, String> texts = new HashMap<>();
        texts.put(DEFAULT_NAME, defaultPolicy);
        for (PolicyStore.Entry e : store.policies()) {
            texts.put(e.name(), e.policy());
        }
        Map<Long, String> assignments = store.assignments();
        for (VolumeRecord v : catalog.volumes()) {
            String name = assignments.get(v.internalId());
            String text = name == null ? null : texts.get(name);
            if (text == null || text.equals(policies.policy(v.name()))) {
                continue;
            }
            try {
                policies.set(v.name(), text);
                LOG.info("volume '{}' now has retention '{}' of policy '{}'", v.name().name(), text, name);
            } catch (GcConflictException e) {
                LOG.warn("volume '{}' keeps its retention: policy '{}' is now '{}', but {}", v.name().name(), name, text,
                        e.getMessage());
            }
        }
    }

    private NamedPolicy builtIn(Map<String, List<String>> byName) {
        return new NamedPolicy(DEFAULT_NAME, defaultPolicy, "the server's default (holdfast.gc.default-retention)", true,
                byName.getOrDefault(DEFAULT_NAME, List.of()), 0, 0);
    }

    private static NamedPolicy view(PolicyStore.Entry e, Map<String, List<String>> byName) {
        return new NamedPolicy(e.name(), e.policy(), e.description(), false, byName.getOrDefault(e.name(), List.of()),
                e.createdMillis(), e.updatedMillis());
    }

    /** Names to the volumes that follow them; a volume with no policy of its own follows the default. */
    private Map<String, List<String>> assignedVolumes() {
        Map<Long, String> assignments = store.assignments();
        Map<String, List<String>> out = new HashMap<>();
        for (VolumeRecord v : catalog.volumes()) {
            String name = assignments.get(v.internalId());
            if (name == null && !policies.explicit(v)) {
                name = DEFAULT_NAME;
            }
            if (name != null) {
                out.computeIfAbsent(name, k -> new ArrayList<>()).add(v.name().name());
            }
        }
        return out;
    }

    private List<VolumeRecord> assigned(String name) {
        Map<Long, String> assignments = store.assignments();
        return catalog.volumes().stream().filter(v -> name.equals(assignments.get(v.internalId()))).toList();
    }

    private void write(java.util.function.Consumer<MetadataBatch> change) {
        try (MetadataBatch b = new MetadataBatch()) {
            change.accept(b);
            store.write(b);
        }
    }

    private static void checkName(String name) {
        if (name == null || !NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("policy name '" + name + "' is not valid: 1 to 64 of A-Z a-z 0-9 . _ -,"
                    + " starting with a letter or digit");
        }
    }

    private static String checkDescription(String description) {
        if (description != null && description.length() > MAX_DESCRIPTION) {
            throw new IllegalArgumentException("description is longer than " + MAX_DESCRIPTION + " characters");
        }
        return description == null ? "" : description;
    }

    private static String abbreviate(List<String> names) {
        return names.size() <= 5 ? names.toString() : names.subList(0, 5) + " and " + (names.size() - 5) + " more";
    }
}
