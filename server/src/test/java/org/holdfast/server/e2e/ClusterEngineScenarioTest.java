package org.holdfast.server.e2e;

import java.util.Map;
import org.junit.jupiter.api.Tag;

/**
 * The end-to-end scenarios against the master/worker engine (preview: 4 in-process workers in
 * nearest mode, each with a small SFI and container cache so that four fit the test server's heap):
 * restores must be exact; dedup may miss a few duplicates, as Sungem may, never invent one. Two
 * minutes here, and restore does not go through the engine (the contract and comparison tests hold
 * what the engine answers), so it runs with -Pslow.
 */
@Tag("slow")
class ClusterEngineScenarioTest extends EngineScenarioSuite {
    @Override
    String engine() {
        return "cluster";
    }

    @Override
    double missedDuplicateAllowance() {
        return 0.10;
    }

    @Override
    Map<String, String> serverProperties() {
        return Map.of("holdfast.dedup.cluster.workers", "4", "holdfast.dedup.cluster.mode", "nearest",
                "holdfast.dedup.sungem.sfi-size", "16MB", "holdfast.dedup.sungem.container-cache-size", "32MB",
                "holdfast.dedup.sungem.bloom-expected-per-period", "1000000");
    }
}
