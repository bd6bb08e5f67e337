package org.holdfast.server.app;

import java.lang.reflect.RecordComponent;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import org.holdfast.common.kill.KillPoints;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.DataObjectPropertyName;
import org.springframework.context.annotation.ClassPathScanningCandidateComponentProvider;
import org.springframework.core.type.filter.AnnotationTypeFilter;
import org.springframework.util.ClassUtils;
import org.springframework.util.unit.DataSize;

/**
 * The names of every {@code holdfast.*} server setting, read off the {@code @ConfigurationProperties}
 * records that bind them (so a new record component is a known setting with nothing else to change),
 * and the {@code holdfast.*} names that belong to other programs and are no setting of the server.
 */
final class SettingNames {
    /** The types a setting may have: one value each, so the record component's name is the whole setting. */
    private static final Set<Class<?>> SCALARS = Set.of(String.class, Path.class, URI.class, Duration.class, DataSize.class,
            Boolean.class, Integer.class, Long.class, Double.class);
    /**
     * JVM system properties of the test and benchmark harnesses (and of the kill points a crash test
     * arms), and the agent's own (holdfast.scan., holdfast.restore.direct): they configure the harness or
     * the agent, never the server, and a harness starts servers with them set.
     */
    static final List<String> HARNESS_PREFIXES = List.of(KillPoints.PROPERTY, "holdfast.test.", "holdfast.e2e.",
            "holdfast.crash.", "holdfast.bench.", "holdfast.spill.", "holdfast.fixture.", "holdfast.frames.",
            "holdfast.smoke.", "holdfast.repo.", "holdfast.client.", "holdfast.footprint.", "holdfast.scan.",
            "holdfast.restore.direct");
    /**
     * Environment variables of the other Holdfast programs, which may share a host (and an environment)
     * with the server: the agent's token, progress switch and hook variables, the launchers' and compose's.
     */
    static final Set<String> OTHER_PROGRAMS_VARIABLES = Set.of("HOLDFAST_TOKEN", "HOLDFAST_PROGRESS", "HOLDFAST_VOLUME",
            "HOLDFAST_SOURCE", "HOLDFAST_PHASE", "HOLDFAST_RESULT", "HOLDFAST_SNAPSHOT", "HOLDFAST_SERVER_JAR",
            "HOLDFAST_SERVER_JAVA_OPTS", "HOLDFAST_HTTPS_PORT", "HOLDFAST_URL", "HOLDFAST_FUZZ_VENV");
    /** Every agent variable ({@code HOLDFAST_AGENT_JAR}, {@code HOLDFAST_AGENT_SOCKET}, ...): no server setting is under holdfast.agent. */
    static final String AGENT_VARIABLES = "HOLDFAST_AGENT_";

    private static volatile Set<String> known;

    private SettingNames() {
    }

    /** Every setting's name in its canonical form ({@code holdfast.store.s3.bucket}), sorted. */
    static Set<String> known() {
        Set<String> k = known;
        if (k == null) {
            k = scan();
            known = k;
        }
        return k;
    }

    /** Whether {@code name} (as a property source holds it) is a harness's system property or another program's variable. */
    static boolean otherProgram(String name, boolean environment) {
        if (environment) {
            String upper = name.toUpperCase(Locale.ROOT);
            return OTHER_PROGRAMS_VARIABLES.contains(upper) || upper.startsWith(AGENT_VARIABLES);
        }
        String lower = name.toLowerCase(Locale.ROOT);
        return HARNESS_PREFIXES.stream().anyMatch(lower::startsWith);
    }

    /** The environment variable that sets {@code setting} (Spring's form: upper case, dots to underscores, no dashes). */
    static String variable(String setting) {
        return setting.replace('.', '_').replace("-", "").toUpperCase(Locale.ROOT);
    }

    /** The setting names of one {@code @ConfigurationProperties} record under {@code prefix}; nested records are groups. */
    static void addNames(Class<?> type, String prefix, Set<String> into) {
        if (!type.isRecord()) {
            // a JavaBean's setters or a map have names this walk cannot see: make it a record of scalars
            throw new IllegalStateException(type.getName() + " binds " + prefix + ".* but is not a record: SettingNames cannot list its settings");
        }
        for (RecordComponent c : type.getRecordComponents()) {
            String name = prefix + "." + DataObjectPropertyName.toDashedForm(c.getName());
            Class<?> t = ClassUtils.resolvePrimitiveIfNecessary(c.getType());
            if (t.isRecord()) {
                addNames(t, name, into);
            } else if (SCALARS.contains(t) || t.isEnum()) {
                into.add(name);
            } else {
                throw new IllegalStateException(name + " has type " + t.getName() + ", which SettingNames does not know as one"
                        + " value (a list or map has open-ended names): add it to SettingNames.SCALARS if it is one");
            }
        }
    }

    /**
     * The settings of every record Spring binds: each {@code @EnableConfigurationProperties} class (and
     * any {@code @ConfigurationProperties} one) in the packages the server's component scan covers, which
     * are the only places a configuration is picked up from.
     */
    private static Set<String> scan() {
        ClassPathScanningCandidateComponentProvider scanner = new ClassPathScanningCandidateComponentProvider(false);
        scanner.addIncludeFilter(new AnnotationTypeFilter(ConfigurationProperties.class));
        scanner.addIncludeFilter(new AnnotationTypeFilter(EnableConfigurationProperties.class));
        Set<Class<?>> types = new LinkedHashSet<>();
        for (String pkg : HoldfastServer.class.getAnnotation(SpringBootApplication.class).scanBasePackages()) {
            for (BeanDefinition d : scanner.findCandidateComponents(pkg)) {
                Class<?> type = ClassUtils.resolveClassName(d.getBeanClassName(), SettingNames.class.getClassLoader());
                EnableConfigurationProperties enable = type.getAnnotation(EnableConfigurationProperties.class);
                types.addAll(enable != null ? List.of(enable.value()) : List.of(type));
            }
        }
        Set<String> names = new TreeSet<>();
        for (Class<?> type : types) {
            ConfigurationProperties p = type.getAnnotation(ConfigurationProperties.class);
            addNames(type, p.prefix().isEmpty() ? p.value() : p.prefix(), names);
        }
        return Collections.unmodifiableSet(names);
    }
}
