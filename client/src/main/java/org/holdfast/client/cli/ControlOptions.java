package org.holdfast.client.cli;

import java.nio.file.Path;
import org.holdfast.client.daemon.ConfigReader;
import picocli.CommandLine.Option;

/** How {@code run-now} and {@code status} find the daemon: its socket, or the config file that names its state directory. */
final class ControlOptions {
    @Option(names = "--config", paramLabel = "FILE", defaultValue = DaemonCommand.DEFAULT_CONFIG,
            description = "The daemon's config file, to find its state directory (default: ${DEFAULT-VALUE}).")
    Path config;

    @Option(names = "--socket", paramLabel = "PATH", description = "The daemon's control socket (overrides --config).")
    Path socket;

    @Option(names = "--json", description = "Print the daemon's answer as JSON on stdout.")
    boolean json;

    @Option(names = "--debug", description = "Show stack traces on errors.")
    boolean debug;

    Path socket() {
        return socket != null ? socket : ConfigReader.read(config).socket();
    }
}
