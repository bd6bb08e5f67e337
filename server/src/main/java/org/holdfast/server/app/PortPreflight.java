package org.holdfast.server.app;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.springframework.boot.context.event.ApplicationEnvironmentPreparedEvent;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.ApplicationListener;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;

/**
 * Tries every port the start will listen on (REST API and console, agents, workers on a master)
 * before anything opens, and refuses the start naming all the taken ones at once: otherwise each is
 * found only when its server binds, tens of seconds in, one per try, after the data directory, the
 * admin password and the certificate were made. The real binds still report a port taken in between.
 */
final class PortPreflight implements ApplicationListener<ApplicationEnvironmentPreparedEvent>, Ordered {

    /** A port the start would listen on: the setting that names it, what it serves, the address and number. */
    record Listen(String setting, String serves, String host, int port) {
        String where() {
            return (host == null || host.isBlank() ? "all addresses" : host) + ":" + port;
        }
    }

    @Override
    public void onApplicationEvent(ApplicationEnvironmentPreparedEvent event) {
        check(listens(event.getEnvironment()));
    }

    @Override
    public int getOrder() {
        return Ordered.LOWEST_PRECEDENCE; // registered after UnknownSettings: a misspelt port name is reported first
    }

    /** The ports this environment's start listens on; a port of 0 (any free one) or below (off) is left out. */
    static List<Listen> listens(ConfigurableEnvironment env) {
        Binder b = Binder.get(env);
        List<Listen> all = new ArrayList<>();
        String role = b.bind("holdfast.cluster.role", String.class).orElse("standalone").trim().toLowerCase(Locale.ROOT);
        add(all, new Listen("server.port", "the REST API and the console", b.bind("server.address", String.class).orElse(null),
                port(b, "server.port", 8080)));
        if (!"worker".equals(role)) {
            add(all, new Listen("holdfast.ingest.port", "agents", b.bind("holdfast.ingest.host", String.class).orElse("0.0.0.0"),
                    port(b, "holdfast.ingest.port", 7070)));
        }
        if ("master".equals(role)) {
            add(all, new Listen("holdfast.cluster.port", "workers", b.bind("holdfast.cluster.host", String.class).orElse("0.0.0.0"),
                    port(b, "holdfast.cluster.port", 7071)));
        }
        return all;
    }

    private static void add(List<Listen> all, Listen l) {
        if (l.port() > 0) {
            all.add(l);
        }
    }

    private static int port(Binder b, String name, int otherwise) {
        try {
            return b.bind(name, Integer.class).orElse(otherwise);
        } catch (RuntimeException e) {
            return 0; // not a number: left to the setting's own check, which names it
        }
    }

    /** Throws {@link PortsTakenException} naming every port of {@code listens} that cannot be bound, or named twice. */
    static void check(List<Listen> listens) {
        List<String> problems = new ArrayList<>();
        List<Listen> seen = new ArrayList<>();
        for (Listen l : listens) {
            Listen same = seen.stream().filter(o -> o.port() == l.port() && overlap(o, l)).findFirst().orElse(null);
            seen.add(l);
            if (same != null) {
                problems.add(l.setting() + " and " + same.setting() + " are both " + l.port() + ": give " + l.serves()
                        + " a port of their own");
                continue;
            }
            String taken = tryBind(l);
            if (taken != null) {
                problems.add(l.setting() + "=" + l.port() + " (" + l.serves() + ") on " + l.where() + ": " + taken);
            }
        }
        if (!problems.isEmpty()) {
            throw new PortsTakenException(problems);
        }
    }

    /**
     * Whether two listens on one port would take the same socket: one on all addresses, or both on the
     * same one. The same port on two distinct addresses binds fine (server.address=10.0.0.1 beside
     * holdfast.ingest.host=10.0.0.2), and was refused.
     */
    private static boolean overlap(Listen a, Listen b) {
        try {
            InetAddress x = address(a);
            InetAddress y = address(b);
            return x == null || y == null || x.isAnyLocalAddress() || y.isAnyLocalAddress() || x.equals(y);
        } catch (IOException e) {
            return true; // unresolvable: the bind reports it
        }
    }

    private static InetAddress address(Listen l) throws IOException {
        return l.host() == null || l.host().isBlank() ? null : InetAddress.getByName(l.host());
    }

    /** Null if {@code l} can be bound now (and is released again), else why not. */
    private static String tryBind(Listen l) {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(true); // as the real servers do: a port in TIME_WAIT after a restart is free
            s.bind(new InetSocketAddress(address(l), l.port()));
            return null;
        } catch (IOException | SecurityException e) {
            return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        }
    }
}
