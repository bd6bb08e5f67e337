package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.util.unit.DataSize;

/** {@code holdfast.store.s3.*} checks at binding: a bad value is refused with the setting's name and an example. */
class S3PropertiesTest {
    private static HoldfastProperties.S3 s3(Duration uploadStall) {
        return new HoldfastProperties.S3(null, "us-east-1", "b", "", null, true, true, "", 0, 0, DataSize.ofGigabytes(10), true, 4,
                DataSize.ofMegabytes(64), uploadStall);
    }

    @Test
    void uploadStallTimeout_zeroOrNegative_refusedNamingTheSetting() {
        for (Duration bad : new Duration[] {Duration.ZERO, Duration.ofSeconds(-1)}) {
            assertThatThrownBy(() -> s3(bad)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("holdfast.store.s3.upload-stall-timeout must be positive").hasMessageContaining("10m");
        }
    }

    @Test
    void uploadStallTimeout_positive_kept() {
        assertThat(s3(Duration.ofMinutes(3)).uploadStallTimeout()).isEqualTo(Duration.ofMinutes(3));
    }
}
