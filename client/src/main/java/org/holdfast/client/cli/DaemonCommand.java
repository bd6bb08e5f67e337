package org.holdfast.client.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import org.holdfast.client.daemon.AgentConfig;
import org.holdfast.client.daemon.AgentDaemon;
import org.holdfast.client.daemon.ConfigReader;
import org.holdfast.client.daemon.DaemonLog;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code daemon}: the resident agent, backing up the configured volumes on their schedules. */
@Command(name = "daemon", mixinStandardHelpOptions = true,
        description = {"Run as a service: back up each volume of the config file on its cron schedule.",
            "Each run has the volume's pre and post hooks and retries while the server is unreachable.",
            "'run-now' and 'status' talk to it over a socket in its state directory.",
            "See docs/agent.md, \"Running the agent as a service\"."})
final class DaemonCommand extends HoldfastAgent.Subcommand implements Callable<Integer> {
    static final String DEFAULT_CONFIG = "/etc/holdfast/agent.yaml";

    @Option(names = "--config", paramLabel = "FILE", defaultValue = DEFAULT_CONFIG,
            description = "The daemon's YAML configuration (default: ${DEFAULT-VALUE}).")
    Path config;

    @Option(names = "--check", description = "Only validate the configuration, print a summary and exit.")
    boolean check;

    @Option(names = "--debug", description = "Show stack traces on errors.")
    boolean debug;

    @Override
    public Integer call() throws InterruptedException {
        AgentConfig c = ConfigReader.read(config);
        if (check) {
            out.println("config " + config + " is valid: server " + c.server() + ", " + c.volumes().size()
                    + " volume(s), state directory " + c.stateDir());
            return 0;
        }
        AgentDaemon daemon = new AgentDaemon(c, new InProcessBackup(), new InProcessRunReport(), new InProcessCommand(),
                new DaemonLog(out), ConnectionOptions.AGENT_VERSION);
        daemon.start();
        Runtime.getRuntime().addShutdownHook(new Thread(daemon::close, "holdfast-daemon-stop"));
        daemon.awaitStop();
        return 0;
    }
}
