package org.holdfast.server.e2e;

/** The end-to-end scenarios against the exact fingerprint index (every duplicate found). */
class ExactEngineScenarioTest extends EngineScenarioSuite {
    @Override
    String engine() {
        return "exact";
    }

    @Override
    double missedDuplicateAllowance() {
        return 0;
    }
}
