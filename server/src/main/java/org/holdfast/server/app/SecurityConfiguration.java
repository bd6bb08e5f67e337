package org.holdfast.server.app;

import com.fasterxml.jackson.databind.ObjectMapper;
import jakarta.servlet.DispatcherType;
import java.nio.file.Path;
import java.time.Clock;
import org.holdfast.server.api.AuditFilter;
import org.holdfast.server.api.BearerTokenFilter;
import org.holdfast.server.api.SecurityProblems;
import org.holdfast.server.api.VolumeScopeInterceptor;
import org.holdfast.server.catalog.RocksCredentialStore;
import org.holdfast.server.security.ApiTokens;
import org.holdfast.server.security.AuditLog;
import org.holdfast.server.security.BearerCredentials;
import org.holdfast.server.security.ConsoleSessions;
import org.holdfast.server.security.CredentialStore;
import org.holdfast.server.security.DownloadLinks;
import org.holdfast.server.security.InitialAdmin;
import org.holdfast.server.security.LoginThrottle;
import org.holdfast.server.security.Logins;
import org.holdfast.server.security.PasswordHasher;
import org.holdfast.server.security.PrincipalRoles;
import org.holdfast.server.security.UserDirectory;
import org.holdfast.server.store.DataDirectory;
import org.holdfast.server.store.MetadataDb;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpMethod;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.annotation.web.configuration.EnableWebSecurity;
import org.springframework.security.config.http.SessionCreationPolicy;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.security.web.authentication.AnonymousAuthenticationFilter;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * Who may call what over HTTP. Stateless: every request carries {@code Authorization: Bearer} with
 * an API token or a console session token from {@code POST /api/v1/auth/login}; no cookies, so no
 * CSRF tokens either.
 *
 * <h2>Rules (first match wins)</h2>
 * <ul>
 *   <li>open: {@code GET /actuator/health} (status only), {@code POST /api/v1/auth/login}, and the
 *       console's static files ({@code /}, {@code /index.html}, {@code /console/**}; they hold no data,
 *       every call they make goes to /api and needs a token);</li>
 *   <li>open: {@code GET /api/v1/volumes/{name}/snapshots/{snapshot}/image/download}; the handler serves it only
 *       for a valid download link ({@link DownloadLinks}) whose holder is still an operator or admin;</li>
 *   <li>open too: the OpenAPI document ({@code /v3/api-docs}) and Swagger UI (the description of the API
 *       holds no data; Swagger UI must load before its Authorize button can take a token);</li>
 *   <li>any authenticated principal: {@code /api/v1/auth/**};</li>
 *   <li>admin: {@code /api/v1/users/**}, {@code /api/v1/tokens/**}, {@code /api/v1/audit};</li>
 *   <li>operator or agent: {@code GET /api/v1/volumes/{name}/snapshots/{snapshot}/image} (an agent
 *       only its own volumes);</li>
 *   <li>viewer or agent: {@code GET /api/v1/volumes/**} (an agent only its own volumes, others
 *       answer 404, see {@link VolumeScopeInterceptor});</li>
 *   <li>jobs: reading {@code /api/v1/jobs/**} a viewer's, cancelling and starting GC jobs
 *       ({@code POST /api/v1/gc/**}) an operator's (never an agent's);</li>
 *   <li>viewer: any other {@code GET /api/**}, {@code POST /api/v1/retention/simulate} (it changes
 *       nothing) and {@code /actuator/**} (Prometheus);</li>
 *   <li>operator: every other method on {@code /api/**};</li>
 *   <li>anything else: authenticated.</li>
 * </ul>
 * Admin includes operator includes viewer; agent includes nothing else.
 */
@Configuration(proxyBeanMethods = false)
@EnableWebSecurity
public class SecurityConfiguration {
    private static final Logger LOG = LoggerFactory.getLogger(SecurityConfiguration.class);
    /** The image download (ImageController). */
    private static final String IMAGE = "/api/v1/volumes/*/snapshots/*/image";
    /** The image through a download link: no bearer header, the link is the credential (ImageController checks it). */
    private static final String IMAGE_DOWNLOAD = IMAGE + "/download";

    @Bean
    CredentialStore credentialStore(MetadataDb db) {
        return new RocksCredentialStore(db);
    }

    @Bean
    PasswordHasher passwordHasher() {
        return new SpringPasswordHasher();
    }

    /** The audit log another part provides, or none. */
    @Bean
    SecurityAudit securityAudit(ObjectProvider<AuditLog> audit) {
        return new SecurityAudit(audit.getIfAvailable(() -> AuditLog.NONE));
    }

    /** Holder, so that a missing AuditLog bean does not need a second AuditLog bean that would clash with a real one. */
    record SecurityAudit(AuditLog log) {
    }

    @Bean
    ApiTokens apiTokens(CredentialStore store, Clock holdfastClock, SecurityAudit audit) {
        return new ApiTokens(store, holdfastClock, audit.log());
    }

    /** Download links live in memory with a random key: a restart ends them all. */
    @Bean
    DownloadLinks downloadLinks(Clock holdfastClock) {
        return new DownloadLinks(holdfastClock, DownloadLinks.DEFAULT_LIFETIME);
    }

    @Bean
    PrincipalRoles principalRoles(UserDirectory users, ApiTokens tokens, Clock holdfastClock) {
        return new PrincipalRoles(users, tokens, holdfastClock);
    }

    @Bean
    ConsoleSessions consoleSessions(HoldfastProperties props, Clock holdfastClock) {
        return new ConsoleSessions(props.security().sessionTimeout(), holdfastClock);
    }

    /** The users; on an empty data directory this makes {@code admin} and writes its password file. */
    @Bean
    UserDirectory userDirectory(CredentialStore store, PasswordHasher hasher, Clock holdfastClock, SecurityAudit audit,
                                ConsoleSessions sessions, DataDirectory dataDirectory) {
        UserDirectory users = new UserDirectory(store, hasher, holdfastClock, audit.log());
        users.onUserChanged(name -> {
            sessions.closeAll(name);
            forgetInitialPassword(users, name, dataDirectory.root());
        });
        forgetInitialPassword(users, UserDirectory.ADMIN, dataDirectory.root()); // changed while the file stayed (older releases)
        Path file = InitialAdmin.ensure(users, dataDirectory.root());
        if (file != null) {
            LOG.info("first start: created user 'admin' with a random password, written to {} (mode 0600). "
                    + "Log in and change it; 'holdfast-server reset-admin --data-dir {}' sets a new one while the server is stopped.",
                    file, dataDirectory.root());
        }
        return users;
    }

    private static void forgetInitialPassword(UserDirectory users, String name, Path dataDir) {
        if (UserDirectory.ADMIN.equals(name) && InitialAdmin.forgetIfStale(users, dataDir)) {
            LOG.info("the admin password changed: deleted {}, which held the first one", dataDir.resolve(InitialAdmin.FILE));
        }
    }

    @Bean
    Logins logins(UserDirectory users, ConsoleSessions sessions, HoldfastProperties props, Clock holdfastClock, SecurityAudit audit) {
        return new Logins(users, sessions, new LoginThrottle(props.security().failedLoginsPerMinute(), holdfastClock),
                holdfastClock, audit.log());
    }

    @Bean
    SecurityFilterChain holdfastSecurity(HttpSecurity http, ConsoleSessions sessions, ApiTokens tokens, SecurityAudit audit,
                                         Clock holdfastClock, ObjectMapper json, ObjectProvider<AuditFilter> auditFilter)
            throws Exception {
        SecurityProblems problems = new SecurityProblems(json);
        BearerTokenFilter bearer = new BearerTokenFilter(new BearerCredentials(sessions, tokens), audit.log(), holdfastClock);
        http.addFilterBefore(bearer, AnonymousAuthenticationFilter.class);
        // after the caller is known, before authorization: refused calls are audited too
        auditFilter.ifAvailable(f -> http.addFilterAfter(f, BearerTokenFilter.class));
        http.csrf(c -> c.disable())
                .httpBasic(b -> b.disable())
                .formLogin(f -> f.disable())
                .logout(l -> l.disable())
                .requestCache(c -> c.disable())
                .sessionManagement(s -> s.sessionCreationPolicy(SessionCreationPolicy.STATELESS))
                .exceptionHandling(e -> e.authenticationEntryPoint(problems).accessDeniedHandler(problems))
                .authorizeHttpRequests(a -> a
                        .dispatcherTypeMatchers(DispatcherType.ERROR, DispatcherType.FORWARD).permitAll()
                        .requestMatchers(HttpMethod.GET, "/actuator/health").permitAll()
                        .requestMatchers(HttpMethod.POST, "/api/v1/auth/login").permitAll()
                        .requestMatchers(HttpMethod.GET, IMAGE_DOWNLOAD).permitAll()
                        .requestMatchers(HttpMethod.HEAD, IMAGE_DOWNLOAD).permitAll()
                        .requestMatchers(HttpMethod.GET, "/", "/index.html", "/console/**", "/favicon.ico").permitAll()
                        // the API's description and Swagger UI hold no data; open, so Swagger UI loads and its Authorize button works
                        .requestMatchers(HttpMethod.GET, "/v3/api-docs", "/v3/api-docs/**", "/v3/api-docs.yaml", "/swagger-ui.html",
                                "/swagger-ui/**").permitAll()
                        .requestMatchers("/api/v1/auth/**").authenticated()
                        .requestMatchers("/api/v1/users", "/api/v1/users/**", "/api/v1/tokens", "/api/v1/tokens/**",
                                "/api/v1/audit", "/api/v1/audit/**").hasRole("ADMIN")
                        .requestMatchers("/api/v1/catalog/backups", "/api/v1/catalog/backups/**").hasRole("ADMIN")
                        .requestMatchers(HttpMethod.DELETE, "/api/v1/cluster/workers/*").hasRole("ADMIN")
                        .requestMatchers(HttpMethod.PUT, "/api/v1/cluster/workers/*/token").hasRole("ADMIN")
                        .requestMatchers(HttpMethod.POST, "/api/v1/cluster/workers/*/replace").hasRole("ADMIN")
                        .requestMatchers(HttpMethod.POST, "/api/v1/cluster/workers/*/rebuild").hasRole("ADMIN")
                        .requestMatchers(HttpMethod.POST, "/api/v1/cluster/workers/*/takeover-fence/reset").hasRole("ADMIN")
                        // a snapshot's data, not metadata: not for viewers (an agent only its own volumes)
                        .requestMatchers(HttpMethod.GET, IMAGE).hasAnyRole("OPERATOR", "AGENT")
                        .requestMatchers(HttpMethod.HEAD, IMAGE).hasAnyRole("OPERATOR", "AGENT")
                        .requestMatchers(HttpMethod.GET, "/api/v1/volumes", "/api/v1/volumes/**").hasAnyRole("VIEWER", "AGENT")
                        .requestMatchers(HttpMethod.GET, "/api/v1/agents", "/api/v1/agents/**").hasRole("OPERATOR")
                        .requestMatchers(HttpMethod.GET, "/api/v1/jobs", "/api/v1/jobs/**").hasRole("VIEWER")
                        .requestMatchers(HttpMethod.POST, "/api/v1/jobs/*/cancel", "/api/v1/gc/**").hasRole("OPERATOR")
                        .requestMatchers(HttpMethod.GET, "/api/**").hasRole("VIEWER")
                        .requestMatchers(HttpMethod.POST, "/api/v1/retention/simulate").hasRole("VIEWER") // changes nothing
                        .requestMatchers("/api/**").hasRole("OPERATOR")
                        .requestMatchers("/actuator/**").hasRole("VIEWER")
                        .anyRequest().authenticated());
        return http.build();
    }

    @Bean
    WebMvcConfigurer volumeScopeInterceptor() {
        return new WebMvcConfigurer() {
            @Override
            public void addInterceptors(InterceptorRegistry registry) {
                registry.addInterceptor(new VolumeScopeInterceptor()).addPathPatterns("/api/v1/volumes/**");
            }
        };
    }
}
