package org.holdfast.server.app;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.springframework.boot.context.event.ApplicationEnvironmentPreparedEvent;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.origin.Origin;
import org.springframework.boot.origin.OriginLookup;
import org.springframework.context.ApplicationListener;
import org.springframework.core.Ordered;
import org.springframework.core.env.CommandLinePropertySource;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.EnumerablePropertySource;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/**
 * Refuses a {@code holdfast.*} name that no setting binds, from any property source (command line,
 * config file, environment, system property): Spring would ignore it and run with the default, so a
 * misspelt bucket or retention would go unnoticed. Runs once the environment is prepared (config files
 * read) and before any bean, so nothing has opened the data directory.
 */
final class UnknownSettings implements ApplicationListener<ApplicationEnvironmentPreparedEvent>, Ordered {

    @Override
    public void onApplicationEvent(ApplicationEnvironmentPreparedEvent event) {
        check(event.getEnvironment());
    }

    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE; // after the config files are read and logging is set up
    }

    /** Throws naming every unknown {@code holdfast.*} name in {@code env}, where it came from and the nearest setting. */
    static void check(ConfigurableEnvironment env) {
        List<String> problems = new ArrayList<>();
        for (PropertySource<?> source : env.getPropertySources()) {
            if (source instanceof EnumerablePropertySource<?> names) {
                boolean environment = source instanceof SystemEnvironmentPropertySource;
                for (String name : names.getPropertyNames()) {
                    if (ours(name, environment) && !SettingNames.otherProgram(name, environment) && !bound(name, environment)
                            && !(environment && ServiceLinkVariables.is(name, source.getProperty(name)))) {
                        problems.add(problem(source, name, environment));
                    }
                }
            }
        }
        if (!problems.isEmpty()) {
            throw new UnknownSettingException(problems);
        }
    }

    private static boolean ours(String name, boolean environment) {
        String lower = name.toLowerCase(Locale.ROOT);
        return lower.startsWith("holdfast.") || environment && lower.startsWith("holdfast_");
    }

    /** Whether a known setting would read {@code name}: Spring's own relaxed lookup, on a source holding that name alone. */
    private static boolean bound(String name, boolean environment) {
        Map<String, Object> one = Map.of(name, "");
        PropertySource<?> alone = environment
                ? new SystemEnvironmentPropertySource(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, one)
                : new MapPropertySource("alone", one);
        ConfigurationPropertySource lookup = ConfigurationPropertySource.from(alone);
        return SettingNames.known().stream().anyMatch(k -> lookup.getConfigurationProperty(ConfigurationPropertyName.of(k)) != null);
    }

    private static String problem(PropertySource<?> source, String name, boolean environment) {
        String advice = NearestSetting.to(name)
                .map(s -> "did you mean " + (environment ? SettingNames.variable(s) + " (" + s + ")" : s) + "?")
                .orElse("no setting has a name like it (docs/operations.md lists them)");
        return name + " (" + where(source, name, environment) + "): " + advice;
    }

    private static String where(PropertySource<?> source, String name, boolean environment) {
        if (source instanceof CommandLinePropertySource<?>) {
            return "command line";
        }
        if (environment) {
            return "environment variable";
        }
        if (StandardEnvironment.SYSTEM_PROPERTIES_PROPERTY_SOURCE_NAME.equals(source.getName())) {
            return "system property -D" + name;
        }
        Origin origin = OriginLookup.getOrigin(source, name);
        return origin != null ? origin.toString() : source.getName();
    }
}
