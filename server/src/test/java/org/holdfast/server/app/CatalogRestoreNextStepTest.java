package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The restore's closing advice: a data=workers master is not sent to the offline fsck, which refuses
 * it, but to the workers' counts rebuild and the online check.
 */
class CatalogRestoreNextStepTest {
    @Test
    void nextStep_dataOnWorkers_pointsAtTheOnlineCheck_standaloneAtBothChecks() {
        Path root = Path.of("/srv/holdfast");
        assertThat(CatalogRestoreTool.nextStep(root, true)).contains("fenced worker", "POST /api/v1/gc/fsck", "full verify")
                .doesNotContain("holdfast-server fsck");
        assertThat(CatalogRestoreTool.nextStep(root, false)).contains("holdfast-server fsck /srv/holdfast", "POST /api/v1/gc/fsck");
    }
}
