package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The overall health carries DEGRADED's description whichever component is degraded, and health hides
 * the components by default: the description must not send a degraded catalog backup to "integrity".
 */
class DegradedStatusTest {
    @Test
    void description_namesEveryComponentThatDegrades_andWhereToSeeWhich() {
        assertThat(VerifyConfiguration.DEGRADED.getDescription())
                .contains("integrity", "catalogBackup", "gc", "log", "management.endpoint.health.show-details");
    }
}
