package org.holdfast.server.app;

import java.time.Clock;
import java.time.Duration;
import org.holdfast.server.api.AuditFilter;
import org.holdfast.server.catalog.AuditStore;
import org.holdfast.server.gc.GcService;
import org.holdfast.server.store.MetadataDb;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.web.servlet.HandlerMapping;

/**
 * Wires the audit log ({@code holdfast.audit.*}): the store in the catalog database, the REST audit
 * filter, and the GC's own entries (lapsed locks, expired snapshots) as principal {@code system}.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(AuditConfiguration.AuditProperties.class)
public class AuditConfiguration {

    /** How long audit entries are kept (older ones are deleted, at most once an hour). */
    @ConfigurationProperties("holdfast.audit")
    public record AuditProperties(@DefaultValue("400d") Duration retention) {
    }

    @Bean
    AuditStore auditStore(MetadataDb db, Clock holdfastClock, AuditProperties p, ObjectProvider<GcService> gc) {
        AuditStore store = new AuditStore(db, holdfastClock, p.retention());
        gc.ifAvailable(g -> g.locks().auditTo(store)); // a worker runs no GC
        return store;
    }

    /** Every POST/PUT/PATCH/DELETE becomes one entry; SecurityConfiguration places it inside the security chain. */
    @Bean
    AuditFilter auditFilter(AuditStore store, Clock holdfastClock,
                            @Qualifier("requestMappingHandlerMapping") HandlerMapping handlers) {
        return new AuditFilter(store, holdfastClock, handlers);
    }

    /** Not also as a plain servlet filter: it runs once, inside the security chain. */
    @Bean
    FilterRegistrationBean<AuditFilter> auditFilterOutsideChain(AuditFilter filter) {
        FilterRegistrationBean<AuditFilter> r = new FilterRegistrationBean<>(filter);
        r.setEnabled(false);
        return r;
    }
}
