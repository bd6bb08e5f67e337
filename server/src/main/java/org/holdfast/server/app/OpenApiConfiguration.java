package org.holdfast.server.app;

import io.swagger.v3.oas.models.Components;
import io.swagger.v3.oas.models.OpenAPI;
import io.swagger.v3.oas.models.info.Info;
import io.swagger.v3.oas.models.info.License;
import io.swagger.v3.oas.models.security.SecurityScheme;
import org.holdfast.server.api.OpenApiConventions;
import org.springdoc.core.customizers.OpenApiCustomizer;
import org.springdoc.core.customizers.PropertyCustomizer;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.info.BuildProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The OpenAPI document at {@code /v3/api-docs} (Swagger UI at {@code /swagger-ui.html}): title,
 * the build's version, the bearer scheme (Swagger UI's Authorize button takes a token), and the
 * conventions of {@link OpenApiConventions} (tags, error responses, content types).
 */
@Configuration(proxyBeanMethods = false)
public class OpenApiConfiguration {
    @Bean
    OpenAPI holdfastOpenApi(ObjectProvider<BuildProperties> build) {
        BuildProperties b = build.getIfAvailable();
        String version = b != null ? b.getVersion() : "0.1.0-SNAPSHOT";
        return new OpenAPI()
                .info(new Info().title("Holdfast administration API").version(version)
                        .description("Administration of a Holdfast backup appliance: volumes and snapshots, retention, "
                                + "jobs, garbage collection, statistics, users, tokens and the audit log. Every call but "
                                + "login needs `Authorization: Bearer <token>` (an API token, or the session token that "
                                + "`POST /api/v1/auth/login` returns). Every error is an RFC 9457 problem detail "
                                + "(`application/problem+json`) whose `type` is a stable URN listed in docs/api.md.")
                        .license(new License().name("See the project's LICENSE")))
                .components(new Components().addSecuritySchemes(OpenApiConventions.BEARER, new SecurityScheme()
                        .type(SecurityScheme.Type.HTTP).scheme("bearer").bearerFormat("hft_ API token or session token")
                        .description("An API token (POST /api/v1/tokens, or `holdfast-server create-token` offline) "
                                + "or a console session token (POST /api/v1/auth/login)")));
    }

    @Bean
    OpenApiCustomizer holdfastOpenApiConventions() {
        return new OpenApiConventions();
    }

    /** Tells the conventions which properties are of a reference type (see {@link OpenApiConventions#nullableProperties}). */
    @Bean
    PropertyCustomizer holdfastNullableProperties(OpenApiCustomizer holdfastOpenApiConventions) {
        return ((OpenApiConventions) holdfastOpenApiConventions).nullableProperties();
    }
}
