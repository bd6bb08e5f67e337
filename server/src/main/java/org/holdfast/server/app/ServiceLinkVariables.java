package org.holdfast.server.app;

import java.util.Locale;
import java.util.regex.Pattern;

/**
 * The environment variables Kubernetes gives every pod of a namespace for each Service (and Docker
 * links for a linked container): for a Service named {@code holdfast} or {@code holdfast-agents},
 * {@code HOLDFAST_SERVICE_HOST}, {@code HOLDFAST_AGENTS_PORT_7070_TCP_ADDR} and the like. They look
 * like settings but name none, and the server's own pod has them with nothing the operator set.
 */
final class ServiceLinkVariables {
    private static final Pattern NAME = Pattern.compile(
            "[A-Z0-9_]+_(SERVICE_HOST|SERVICE_PORT(_[A-Z0-9_]+)?|PORT_[0-9]+_(TCP|UDP|SCTP)(_(PROTO|PORT|ADDR))?)");
    // the bare HOLDFAST_PORT (a Service's first port) is told from a typo by its value, an address no setting takes
    private static final Pattern BARE_PORT = Pattern.compile("(tcp|udp|sctp)://[^\\s]+:[0-9]+");

    private ServiceLinkVariables() {
    }

    /** Whether environment variable {@code name} with {@code value} is one a Service (or a Docker link) sets. */
    static boolean is(String name, Object value) {
        String upper = name.toUpperCase(Locale.ROOT);
        if (NAME.matcher(upper).matches()) {
            return true;
        }
        return upper.endsWith("_PORT") && value != null && BARE_PORT.matcher(value.toString()).matches();
    }
}
