package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** {@code holdfast.cluster.takeover-check}: sha256 or size, anything else refuses the start naming both. */
class TakeoverCheckPropertyTest {
    private static HoldfastProperties.Cluster cluster(String takeoverCheck) {
        return new HoldfastProperties.Cluster("worker", "0.0.0.0", 7071, "m:7071", "", null, null, Duration.ofSeconds(2),
                Duration.ofSeconds(6), Duration.ofSeconds(15), 1L << 40, 16, "master", takeoverCheck);
    }

    @Test
    void sha256ReadsBeforeTheClaim_sizeDoesNot_aTypoIsRefused() {
        assertThat(cluster("sha256").takeoverSha256()).isTrue();
        assertThat(cluster("size").takeoverSha256()).isFalse();
        assertThatThrownBy(() -> cluster("SHA-256")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("holdfast.cluster.takeover-check must be 'sha256' (the default: a takeover reads every recorded log"
                        + " before it claims the range) or 'size' (sizes only before the claim), not 'SHA-256'");
    }
}
