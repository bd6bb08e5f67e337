package org.holdfast.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import org.junit.jupiter.api.Test;

class ConnectionLimitsTest {
    @Test
    void admit_overPerSourceOrTotal_refusedWithTheSettingToRaiseAndNothingCounted() throws Exception {
        ConnectionLimits limits = new ConnectionLimits(3, 2);
        InetAddress a = InetAddress.getByName("10.0.0.1");
        InetAddress b = InetAddress.getByName("10.0.0.2");
        assertThat(limits.admit(a)).isNull();
        assertThat(limits.admit(a)).isNull();
        assertThat(limits.admit(a)).contains("10.0.0.1").contains("max-connections-per-source");
        assertThat(limits.open()).isEqualTo(2);
        assertThat(limits.admit(b)).isNull();
        assertThat(limits.admit(b)).contains("max-connections").doesNotContain("per-source");
        assertThat(limits.open()).isEqualTo(3);
        limits.release(a);
        assertThat(limits.admit(b)).as("room again after one closed").isNull();
    }
}
