package org.holdfast.server.api;

import java.time.Duration;
import java.util.List;
import org.holdfast.server.security.ApiTokens;
import org.holdfast.server.security.Role;
import org.holdfast.server.security.VolumeScope;
import org.springframework.boot.test.web.client.TestRestTemplate;
import org.springframework.context.ApplicationContext;
import org.springframework.http.HttpHeaders;

/** API tokens for tests that call the REST API of an in-process server. */
public final class TestTokens {
    private TestTokens() {
    }

    /** A fresh token of {@code role} reaching every volume. */
    public static String issue(ApplicationContext ctx, Role role) {
        return issue(ctx, role, VolumeScope.ALL, null);
    }

    /** A fresh token; {@code lifetime} null for none. */
    public static String issue(ApplicationContext ctx, Role role, VolumeScope scope, Duration lifetime) {
        return ctx.getBean(ApiTokens.class).issue(new ApiTokens.TokenRequest("test-" + role.wireName(), role, scope, null, lifetime),
                "test", "local").token();
    }

    /** Makes every request of {@code rest} carry {@code token} (replacing any earlier one). */
    public static void authorize(TestRestTemplate rest, String token) {
        var interceptors = rest.getRestTemplate().getInterceptors();
        interceptors.removeIf(i -> i instanceof Bearer);
        interceptors.add(new Bearer(token));
    }

    private record Bearer(String token) implements org.springframework.http.client.ClientHttpRequestInterceptor {
        @Override
        public org.springframework.http.client.ClientHttpResponse intercept(org.springframework.http.HttpRequest request, byte[] body,
                org.springframework.http.client.ClientHttpRequestExecution execution) throws java.io.IOException {
            if (!request.getHeaders().containsKey(HttpHeaders.AUTHORIZATION)) {
                request.getHeaders().setBearerAuth(token);
            }
            return execution.execute(request, body);
        }
    }

    static List<Role> allRoles() {
        return List.of(Role.values());
    }
}
