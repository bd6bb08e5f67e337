package org.holdfast.client.cli;

import java.net.InetAddress;
import java.time.Duration;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;
import org.holdfast.client.net.ServerAddress;
import org.holdfast.client.net.ServerConnection;
import org.holdfast.common.id.VolumeId;
import picocli.CommandLine.Option;

/** Options every subcommand takes: where the server is, which volume, how to report. */
public final class ConnectionOptions {
    static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(15);
    static final Duration HELLO_TIMEOUT = Duration.ofSeconds(60);

    @Option(names = "--server", paramLabel = "HOST:PORT", defaultValue = "localhost:7070",
            description = "Server ingest address (default: ${DEFAULT-VALUE}).")
    String server;

    @Option(names = "--volume", paramLabel = "NAME", required = true,
            description = "Volume name: 1-128 of letters, digits, '.', '_', '-', not starting with '.'.")
    String volume;

    @Option(names = "--token", paramLabel = "TOKEN", defaultValue = "${env:HOLDFAST_TOKEN}",
            description = "Agent token, if the server requires one (default: $HOLDFAST_TOKEN).")
    String token;

    @Option(names = "--json", description = "Print the result as JSON on stdout (no progress line).")
    boolean json;

    @Option(names = "--debug", description = "Show stack traces on errors.")
    boolean debug;

    ServerAddress address() {
        return ServerAddress.parse(server);
    }

    String volume() {
        if (!VolumeId.isValid(volume)) {
            throw new AgentException(ExitCode.USAGE, "invalid volume name '" + volume + "'",
                    "use 1 to 128 letters, digits, '.', '_' or '-', not starting with '.'");
        }
        return volume;
    }

    /** Connects and says HELLO. */
    ServerConnection open() {
        ServerAddress address = address();
        String vol = volume(); // validate before touching the network
        assert vol != null;
        ServerConnection conn = ServerConnection.connect(address, CONNECT_TIMEOUT);
        try {
            conn.hello(agentName(), token == null ? "" : token, HELLO_TIMEOUT);
            return conn;
        } catch (RuntimeException e) {
            conn.close();
            throw e;
        }
    }

    static String agentName() {
        String name;
        try {
            name = InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            name = "unknown-host";
        }
        String n = "holdfast-agent@" + name;
        return n.length() > 200 ? n.substring(0, 200) : n;
    }
}
