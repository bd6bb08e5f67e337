package org.holdfast.server.gc;

import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * Server properties for an offline tool, looked up where the server finds them: {@code --name=value}
 * arguments first, then system properties, then environment variables in Spring's form (upper case,
 * dots to underscores, dashes removed: {@code HOLDFAST_STORE_S3_CREDENTIALSFILE}).
 */
public final class OfflineProperties implements UnaryOperator<String> {
    private final Map<String, String> arguments;
    private final Map<String, String> environment;

    private OfflineProperties(Map<String, String> arguments, Map<String, String> environment) {
        this.arguments = arguments;
        this.environment = environment;
    }

    /** Takes the {@code --holdfast.*=value} arguments out of {@code args} (the rest stays in {@code rest}). */
    static OfflineProperties of(String[] args, List<String> rest, Map<String, String> environment) {
        Map<String, String> props = new HashMap<>();
        for (String a : args) {
            int eq = a.indexOf('=');
            if (a.startsWith("--holdfast.") && eq > 0) {
                props.put(a.substring(2, eq), a.substring(eq + 1));
            } else {
                rest.add(a);
            }
        }
        return new OfflineProperties(props, environment);
    }

    /** As {@link #of(String[], List, Map)} with the process's environment. */
    public static OfflineProperties of(String[] args, List<String> rest) {
        return of(args, rest, System.getenv());
    }

    @Override
    public String apply(String name) {
        String v = arguments.get(name);
        if (v == null) {
            v = System.getProperty(name);
        }
        if (v == null) {
            v = environment.get(name.replace('.', '_').replace("-", "").toUpperCase(Locale.ROOT));
        }
        return v;
    }
}
