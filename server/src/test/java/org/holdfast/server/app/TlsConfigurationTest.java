package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The addresses a self-signed certificate names (over HTTPS with the name checked: ServerApiTest). */
class TlsConfigurationTest {
    @Test
    void certificateNames_everyConfiguredAddressOnce_withoutBracketsOrBlanks() {
        assertThat(TlsConfiguration.certificateNames("10.0.0.5", " 10.0.0.6 ", "[::1]")).containsExactly("10.0.0.5", "10.0.0.6", "::1");
        assertThat(TlsConfiguration.certificateNames("0.0.0.0", "0.0.0.0", "")).containsExactly("0.0.0.0"); // the certificate skips wildcards
        assertThat(TlsConfiguration.certificateNames(null, "worker-1.example", null)).containsExactly("worker-1.example");
    }
}
