package org.holdfast.bench.runner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.holdfast.bench.runner.TargetResults.target;

import java.util.List;
import org.junit.jupiter.api.Test;

class HoldfastVariantTest {
    @Test
    void parse_everyNameTheRunMakes_givesBackItsVariant() {
        for (String engine : List.of("sungem", "exact", "cluster4-hash")) {
            for (boolean gc : List.of(true, false)) {
                for (boolean tls : List.of(true, false)) {
                    for (AgentMode mode : AgentMode.values()) {
                        HoldfastVariant v = new HoldfastVariant(engine, gc, tls, mode);
                        assertThat(HoldfastVariant.parse(v.name())).contains(v);
                    }
                }
            }
        }
        assertThat(new HoldfastVariant("sungem", false, false, AgentMode.DAEMON).name()).isEqualTo("holdfast-sungem-gc-off-tls-off-daemon");
        assertThat(HoldfastVariant.parse("restic")).isEmpty();
        assertThat(HoldfastVariant.parse("holdfast-")).isEmpty();
    }

    @Test
    void closest_prefersTheSameTlsAndAgentModeOverTheSameGcBookkeeping() {
        HoldfastVariant gcOffDaemon = HoldfastVariant.parse("holdfast-sungem-gc-off-tls-off-daemon").orElseThrow();
        List<BenchResults.TargetResult> all = List.of(target("holdfast-exact", 1, 1, 1), target("holdfast-exact-tls-off", 1, 1, 1),
                target("holdfast-exact-tls-off-daemon", 1, 1, 1), target("holdfast-sungem-tls-off-daemon", 1, 1, 1));

        assertThat(gcOffDaemon.closest("exact", all)).hasValueSatisfying(t -> assertThat(t.name).isEqualTo("holdfast-exact-tls-off-daemon"));
        assertThat(gcOffDaemon.closest("exact", all.subList(0, 2))).hasValueSatisfying(t -> assertThat(t.name).isEqualTo("holdfast-exact-tls-off"));
        assertThat(gcOffDaemon.closest("cluster4", all)).isEmpty();
    }
}
