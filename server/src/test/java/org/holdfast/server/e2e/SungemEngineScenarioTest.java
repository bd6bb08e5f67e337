package org.holdfast.server.e2e;

/**
 * The end-to-end scenarios against the Sungem engine (sampled index): restores must be exact
 * all the same; dedup may miss a few duplicates, never invent one.
 */
class SungemEngineScenarioTest extends EngineScenarioSuite {
    @Override
    String engine() {
        return "sungem";
    }

    @Override
    double missedDuplicateAllowance() {
        return 0.10;
    }
}
