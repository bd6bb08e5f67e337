package org.holdfast.server.app;

import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.event.ApplicationEnvironmentPreparedEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MutablePropertySources;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/**
 * Drops the {@code HOLDFAST_<NAME>_PORT=tcp://host:port} variables Kubernetes (or a Docker link) sets for
 * a Service named {@code holdfast-<name>}: Spring would bind {@code HOLDFAST_INGEST_PORT} to the ingest
 * port and fail the start on the address, though no setting takes one. A port the operator sets is a
 * number and is kept.
 */
final class ServiceLinkPorts implements ApplicationListener<ApplicationEnvironmentPreparedEvent>, Ordered {
    private static final Logger LOG = LoggerFactory.getLogger(ServiceLinkPorts.class);

    @Override
    public void onApplicationEvent(ApplicationEnvironmentPreparedEvent event) {
        drop(event.getEnvironment()).forEach((name, value) -> LOG.info("ignoring the environment variable {}={}: a Kubernetes"
                + " Service (or Docker link) address, not a port; no setting takes it", name, value));
    }

    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE - 1; // after logging is set up, before UnknownSettings
    }

    /** Replaces {@code env}'s environment variables with a copy without the Service link ports; returns those, by name. */
    static Map<String, Object> drop(ConfigurableEnvironment env) {
        MutablePropertySources sources = env.getPropertySources();
        Map<String, Object> dropped = new LinkedHashMap<>();
        for (PropertySource<?> source : sources) {
            if (source instanceof SystemEnvironmentPropertySource variables) {
                Map<String, Object> kept = new LinkedHashMap<>();
                for (String name : variables.getPropertyNames()) {
                    Object value = variables.getProperty(name);
                    if (name.startsWith("HOLDFAST_") && name.endsWith("_PORT") && ServiceLinkVariables.is(name, value)) {
                        dropped.put(name, value);
                    } else {
                        kept.put(name, value);
                    }
                }
                if (!dropped.isEmpty()) {
                    sources.replace(source.getName(), new SystemEnvironmentPropertySource(source.getName(), kept));
                }
                break;
            }
        }
        return dropped;
    }
}
