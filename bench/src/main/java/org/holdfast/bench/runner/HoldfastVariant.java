package org.holdfast.bench.runner;

import java.util.Collection;
import java.util.Comparator;
import java.util.Optional;

/**
 * What tells one Holdfast target from another: engine, GC bookkeeping, TLS and agent mode. The
 * target's name is made here and read back here, so summaries find a target's partners (its exact
 * engine run, its GC-off run) by role, whatever variants the run had.
 */
public record HoldfastVariant(String engine, boolean gcBookkeeping, boolean tls, AgentMode agentMode) {
    private static final String PREFIX = "holdfast-";
    private static final String GC_OFF = "-gc-off";
    private static final String TLS_OFF = "-tls-off";

    /** The target name: holdfast-ENGINE, then -gc-off, -tls-off and the agent mode's suffix where they apply. */
    public String name() {
        return PREFIX + engine + (gcBookkeeping ? "" : GC_OFF) + (tls ? "" : TLS_OFF) + agentMode.suffix();
    }

    /** The variant a target name stands for; empty for a peer (restic, borg). */
    public static Optional<HoldfastVariant> parse(String name) {
        if (name == null || !name.startsWith(PREFIX)) {
            return Optional.empty();
        }
        String rest = name.substring(PREFIX.length());
        AgentMode mode = AgentMode.FRESH;
        // suffixes come off in the reverse of the order name() puts them on
        if (!AgentMode.DAEMON.suffix().isEmpty() && rest.endsWith(AgentMode.DAEMON.suffix())) {
            mode = AgentMode.DAEMON;
            rest = rest.substring(0, rest.length() - AgentMode.DAEMON.suffix().length());
        }
        boolean tls = !rest.endsWith(TLS_OFF);
        if (!tls) {
            rest = rest.substring(0, rest.length() - TLS_OFF.length());
        }
        boolean gc = !rest.endsWith(GC_OFF);
        if (!gc) {
            rest = rest.substring(0, rest.length() - GC_OFF.length());
        }
        return rest.isEmpty() ? Optional.empty() : Optional.of(new HoldfastVariant(rest, gc, tls, mode));
    }

    /** Whether {@code name} is a Holdfast target's. */
    public static boolean isHoldfast(String name) {
        return parse(name).isPresent();
    }

    /** The same variant with another engine. */
    public HoldfastVariant withEngine(String other) {
        return new HoldfastVariant(other, gcBookkeeping, tls, agentMode);
    }

    /** The same variant with GC bookkeeping on or off. */
    public HoldfastVariant withGcBookkeeping(boolean on) {
        return new HoldfastVariant(engine, on, tls, agentMode);
    }

    /**
     * Of the targets running {@code engine}, the one most like this variant: the same TLS, agent mode
     * and GC bookkeeping if there is one, else the one that differs in the fewest of them (TLS and
     * agent mode weigh more than GC bookkeeping, which changes no dedup decision).
     */
    public Optional<BenchResults.TargetResult> closest(String onEngine, Collection<BenchResults.TargetResult> targets) {
        return targets.stream()
                .filter(t -> parse(t.name).map(v -> v.engine.equals(onEngine)).orElse(false))
                .min(Comparator.comparingInt(t -> distance(parse(t.name).orElseThrow())));
    }

    private int distance(HoldfastVariant o) {
        return (tls == o.tls ? 0 : 2) + (agentMode == o.agentMode ? 0 : 2) + (gcBookkeeping == o.gcBookkeeping ? 0 : 1);
    }
}
