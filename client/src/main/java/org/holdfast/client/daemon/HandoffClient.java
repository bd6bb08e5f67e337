package org.holdfast.client.daemon;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Map;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;

/**
 * The CLI's end of a handoff ({@code {"command":"exec"}} on the control socket; {@link ControlLines}
 * frames it): sends the command, copies the daemon's {@code out} and {@code err} frames to this
 * process's streams as they come, and returns the {@code exit} frame's code. Anything that stops the
 * handoff before the command started (no socket, a socket of another user, a daemon that refuses)
 * is a {@link Outcome#local(String) local} outcome with the reason, and the caller runs the command itself.
 */
public final class HandoffClient {
    private static final ObjectMapper JSON = new ObjectMapper();

    private HandoffClient() {
    }

    /** Either the daemon ran the command ({@code handed}, with its exit code) or it did not, and why. */
    public record Outcome(boolean handed, int exitCode, String reason) {
        static Outcome local(String reason) {
            return new Outcome(false, -1, reason);
        }
    }

    /**
     * Hands {@code request} to the daemon on {@code socket} if that socket belongs to {@code user};
     * the command's output goes to {@code out} and {@code err}.
     */
    public static Outcome exec(Path socket, String user, Map<String, Object> request, PrintStream out, PrintStream err) {
        String owner;
        try {
            if (!Files.exists(socket, LinkOption.NOFOLLOW_LINKS)) {
                return Outcome.local("no agent daemon socket at " + socket);
            }
            owner = Files.getOwner(socket, LinkOption.NOFOLLOW_LINKS).getName();
        } catch (IOException e) {
            return Outcome.local("cannot look at the agent daemon socket " + socket + ": " + e.getMessage());
        }
        if (!owner.equals(user)) {
            // a daemon of another user would write files with its ownership, not the caller's
            return Outcome.local("the agent daemon socket " + socket + " belongs to " + owner + ", not to " + user);
        }
        SocketChannel ch;
        try {
            ch = SocketChannel.open(StandardProtocolFamily.UNIX);
            ch.connect(UnixDomainSocketAddress.of(socket));
        } catch (IOException e) {
            return Outcome.local("no agent daemon answers on " + socket + " (" + e.getMessage() + ")");
        }
        try (ch) {
            OutputStream o = Channels.newOutputStream(ch);
            o.write((JSON.writeValueAsString(request) + "\n").getBytes(StandardCharsets.UTF_8));
            o.flush();
            return relay(new BufferedInputStream(Channels.newInputStream(ch)), socket, out, err);
        } catch (IOException e) {
            throw lost(socket, e.getMessage());
        }
    }

    /** Copies frames until the exit frame; a refusal before any output is a local outcome. */
    static Outcome relay(InputStream in, Path socket, PrintStream out, PrintStream err) throws IOException {
        boolean started = false;
        while (true) {
            String line = ControlLines.read(in, ControlLines.MAX_ANSWER);
            if (line == null) {
                if (!started) {
                    return Outcome.local("the agent daemon on " + socket + " closed the connection without answering");
                }
                throw lost(socket, "connection closed before the exit code");
            }
            JsonNode f = JSON.readTree(line);
            if (f.has("out")) {
                out.print(f.get("out").asText());
                out.flush();
            } else if (f.has("err")) {
                err.print(f.get("err").asText());
                err.flush();
            } else if (f.has("exit")) {
                return new Outcome(true, f.get("exit").asInt(), null);
            } else if (!started && f.has("error")) {
                return Outcome.local("the agent daemon refused the handoff: " + f.get("error").asText());
            } else if (f.path("started").asBoolean(false)) {
                started = true;
            } else {
                throw new IOException("unexpected frame from the agent daemon: " + line);
            }
        }
    }

    private static AgentException lost(Path socket, String why) {
        return new AgentException(ExitCode.NETWORK, "lost the agent daemon on " + socket + " during the handed-off command: " + why,
                "look at the daemon's log; rerun with --no-daemon to run it in this process");
    }
}
