package org.holdfast.server.app;

import org.holdfast.server.ingest.TestTokens;
import org.holdfast.server.security.TokenAuthenticator;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;

/** Gives Spring tests the in-memory {@link TestTokens}, so {@code AgentDriver}'s default token is accepted on the ingest port. */
@TestConfiguration(proxyBeanMethods = false)
public class TestTokenConfiguration {
    @Bean
    @Primary
    TokenAuthenticator testTokens() {
        return new TestTokens();
    }
}
