package org.holdfast.client.cli;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.holdfast.client.StateDirectory;
import org.holdfast.client.daemon.AgentConfig;
import org.holdfast.client.daemon.ConfigReader;
import org.holdfast.client.daemon.HandoffClient;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.Spec;

/**
 * How {@code backup} and {@code restore} hand their work to a running agent daemon of the same user
 * (whose JVM is warm) instead of doing it in this fresh one; see docs/agent.md, "Handing one-shot
 * commands to the daemon".
 */
final class HandoffOptions {
    static final String SOCKET_ENV = org.holdfast.client.daemon.DaemonSocket.ENV;
    /** Options that stay here: the token travels in its own field, never in the argument list. */
    private static final Set<String> KEPT_HERE = Set.of("--token", "--socket", "--no-daemon", "--verbose");

    @Spec(Spec.Target.MIXEE)
    CommandSpec command;

    @Option(names = "--no-daemon", description = "Run in this process even if an agent daemon of this user is running.")
    boolean noDaemon;

    @Option(names = "--socket", paramLabel = "PATH", description = "The agent daemon's control socket to hand the work to"
            + " (default: $" + SOCKET_ENV + ", else agent.sock in the daemon's default state directory).")
    Path socket;

    @Option(names = "--verbose", description = "Say whether the work was handed to the agent daemon, or why not.")
    boolean verbose;

    /**
     * The command's exit code: {@link #delegate} hands it to the daemon, else {@code here} runs it in
     * this process, printing to {@code out} and {@code err} (JSON if {@code conn} asks for it).
     */
    Integer runInDaemonOrHere(ConnectionOptions conn, PrintStream out, PrintStream err, Function<Output, Integer> here) {
        Integer handed = delegate(conn, out, err);
        if (handed != null) {
            return handed; // the agent daemon ran it
        }
        return here.apply(new Output(out, err, conn.json));
    }

    /**
     * Hands the command to the daemon and returns its exit code once it has run there (its output
     * printed to {@code out} and {@code err}), or returns null: the caller runs the command itself.
     */
    Integer delegate(ConnectionOptions conn, PrintStream out, PrintStream err) {
        if (noDaemon) {
            return null;
        }
        String env = System.getenv(SOCKET_ENV);
        boolean named = socket != null || (env != null && !env.isBlank());
        Path sock = socket != null ? socket : named ? Path.of(env)
                : AgentConfig.socketIn(ConfigReader.defaultStateDir(System.getenv()));
        Output o = new Output(out, err, false);
        Map<String, Object> request = new LinkedHashMap<>();
        request.put("command", "exec");
        request.put("args", arguments(conn, o));
        request.put("cwd", Path.of("").toAbsolutePath().toString());
        String token = conn.tokenFile == null && conn.token != null && !conn.token.isBlank() ? conn.token.strip() : null;
        if (token != null) {
            request.put("token", token); // only over the 0600 socket, to a daemon of this very user
        }
        HandoffClient.Outcome r = HandoffClient.exec(sock, System.getProperty("user.name"), request, out, err);
        if (r.handed()) {
            if (verbose) {
                o.notice("ran in the agent daemon on " + sock);
            }
            return r.exitCode();
        }
        if (verbose || named) {
            o.notice("running in this process: " + r.reason());
        }
        return null;
    }

    /**
     * This command's arguments as given, paths made absolute against this process's working directory,
     * plus the state directory and known-servers file this user's environment names (the daemon's
     * environment may name others).
     */
    List<String> arguments(ConnectionOptions conn, Output o) {
        ParseResult parsed = command.commandLine().getParseResult();
        List<String> a = new ArrayList<>(List.of(command.name()));
        for (OptionSpec opt : parsed.matchedOptions()) {
            String name = opt.longestName();
            if (KEPT_HERE.contains(name)) {
                continue;
            }
            a.add(name);
            if (opt.arity().max() > 0) {
                Object v = opt.getValue();
                a.add(v instanceof Path p ? p.toAbsolutePath().toString() : opt.stringValues().get(opt.stringValues().size() - 1));
            }
        }
        if (command.findOption("--state-dir") != null && !parsed.hasMatchedOption("--state-dir")) {
            a.addAll(List.of("--state-dir", StateDirectory.current().resolve(StateDirectory.AGENT_STATE, o::notice).toString()));
        }
        if (!conn.noTls && !parsed.hasMatchedOption("--known-servers")) {
            a.addAll(List.of("--known-servers", conn.knownServersFile(o::notice).toString()));
        }
        return a;
    }
}
