package org.holdfast.client.cli;

import java.nio.file.Path;
import org.holdfast.client.daemon.ConfigReader;
import org.holdfast.client.daemon.DaemonSocket;
import picocli.CommandLine.Option;

/** How {@code run-now} and {@code status} find the daemon: its socket, the config file that names its state directory, or a search. */
final class ControlOptions {
    @Option(names = "--config", paramLabel = "FILE",
            description = "The daemon's config file, to find its state directory (default: the first socket found of"
                    + " $" + DaemonSocket.ENV + ", " + DaemonCommand.DEFAULT_CONFIG + "'s state directory, this user's"
                    + " default state directory, /var/lib/holdfast-agent).")
    Path config;

    @Option(names = "--socket", paramLabel = "PATH", description = "The daemon's control socket (overrides --config).")
    Path socket;

    @Option(names = "--json", description = "Print the daemon's answer as JSON on stdout.")
    boolean json;

    @Option(names = "--debug", description = "Show stack traces on errors.")
    boolean debug;

    Path socket() {
        if (socket != null) {
            return socket;
        }
        if (config != null) {
            return ConfigReader.read(config).socket();
        }
        return DaemonSocket.find(Path.of(DaemonCommand.DEFAULT_CONFIG), System.getenv());
    }
}
