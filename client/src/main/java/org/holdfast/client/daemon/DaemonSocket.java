package org.holdfast.client.daemon;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;

/**
 * Where {@code status} and {@code run-now} find the running daemon when neither {@code --socket} nor
 * {@code --config} is given: {@code $HOLDFAST_AGENT_SOCKET}, else the first control socket that exists
 * of the default config's state directory, this user's default state directory (where the backup
 * handoff looks) and the systemd unit's state directory (docs/agent.md, "Running the agent as a service").
 */
public final class DaemonSocket {
    /** The variable that names the socket (shared with the backup and restore handoff). */
    public static final String ENV = "HOLDFAST_AGENT_SOCKET";
    /** {@code StateDirectory=holdfast-agent} of docker/systemd/holdfast-agent.service. */
    static final Path SERVICE_STATE_DIR = Path.of("/var/lib/holdfast-agent");

    private DaemonSocket() {
    }

    /** A place a daemon's socket may be, and why it is looked at. */
    record Candidate(Path socket, String from) {
    }

    /**
     * The socket to talk to; {@code defaultConfig} is read if it exists (a file that cannot be read or
     * is invalid is passed over). No socket anywhere is a {@link ExitCode#NETWORK} failure naming every
     * place looked at and what to pass instead.
     */
    public static Path find(Path defaultConfig, Map<String, String> env) {
        String named = env.get(ENV);
        if (named != null && !named.isBlank()) {
            return Path.of(named);
        }
        List<Candidate> candidates = candidates(defaultConfig, env);
        for (Candidate c : candidates) {
            if (Files.exists(c.socket(), LinkOption.NOFOLLOW_LINKS)) {
                return c.socket();
            }
        }
        List<String> looked = new ArrayList<>();
        for (Candidate c : candidates) {
            looked.add(c.socket() + " (" + c.from() + ")");
        }
        throw new AgentException(ExitCode.NETWORK, "no agent daemon socket found; looked at " + String.join(", ", looked),
                "start the daemon (holdfast-agent daemon --config FILE, or systemctl start holdfast-agent), or name its"
                        + " socket with --socket PATH (or $" + ENV + ") or its config with --config FILE");
    }

    static List<Candidate> candidates(Path defaultConfig, Map<String, String> env) {
        List<Candidate> out = new ArrayList<>();
        if (Files.exists(defaultConfig)) {
            try {
                out.add(new Candidate(ConfigReader.read(defaultConfig, env).socket(), "state-dir of " + defaultConfig));
            } catch (AgentException e) {
                // unreadable by this user (a service's file) or invalid: the other places may still hold the socket
            }
        }
        add(out, new Candidate(AgentConfig.socketIn(ConfigReader.defaultStateDir(env)), "this user's default state directory"));
        add(out, new Candidate(AgentConfig.socketIn(SERVICE_STATE_DIR), "the systemd unit's state directory"));
        return out;
    }

    private static void add(List<Candidate> out, Candidate c) {
        if (out.stream().noneMatch(o -> o.socket().equals(c.socket()))) {
            out.add(c);
        }
    }
}
