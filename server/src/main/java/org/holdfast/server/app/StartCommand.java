package org.holdfast.server.app;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.holdfast.common.kill.KillPoints;
import org.springframework.boot.SpringApplication;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Unmatched;

/**
 * {@code start}: runs the appliance. Its arguments are Spring's ({@code --holdfast.data-dir=DIR},
 * {@code --server.port=8080}, any {@code --NAME=VALUE}) and go to Spring unchanged: the one command
 * whose unknown arguments are not refused; but a {@code holdfast.*} name that is no setting, from any
 * source, is ({@link UnknownSettings}: exit 2, nothing opened).
 */
@Command(name = "start", sortOptions = false,
        customSynopsis = "usage: holdfast-server [start] [--holdfast.data-dir=DIR] [--server.port=8080] [--NAME=VALUE ...]",
        description = {"Runs the appliance (default data directory ./holdfast-data). Every --NAME=VALUE is a server setting",
            "(docs/operations.md), read by Spring as given. A holdfast.* name that is no setting (on the command line, in a",
            "config file, the environment or a system property) is refused, naming the nearest setting: exit 2."})
final class StartCommand implements Callable<Integer> {
    @Mixin
    HelpOption help;

    @Unmatched
    List<String> settings = new ArrayList<>();

    /** The exit code of a start that failed after the command line was read (a port or the data directory in use, ...). */
    static final int EXIT_START_FAILED = 1;

    private boolean started;

    @Override
    public Integer call() {
        // loads the kill-point registry now: a mistyped -Dholdfast.kill-point fails the start, not a later hit
        KillPoints.armedPoint().ifPresent(p -> System.err.println("holdfast: TEST MODE: kill point " + p.name()
                + " is armed; this process halts when it reaches it"));
        SpringApplication app = new SpringApplication(HoldfastServer.class);
        app.addListeners(new ServiceLinkPorts()); // a Service named holdfast-ingest sets HOLDFAST_INGEST_PORT=tcp://...
        app.addListeners(new UnknownSettings()); // a misspelt holdfast.* name fails the start before anything opens
        app.addListeners(new PortPreflight()); // then every taken port at once, still before anything opens
        try {
            app.run(settings.toArray(String[]::new));
        } catch (UnknownSettingException e) {
            return ServerCli.EXIT_USAGE; // Spring has reported it (UnknownSettingFailureAnalyzer)
        } catch (RuntimeException e) {
            // Spring has reported it: a failure analysis (what happened, what to do), else "Application run failed" with the
            // stack trace; picocli would print the trace again after the analysis, burying it
            return EXIT_START_FAILED;
        }
        started = true;
        return 0;
    }

    /** Whether the appliance runs (its threads keep the process alive: nobody may exit it). */
    boolean started() {
        return started;
    }
}
