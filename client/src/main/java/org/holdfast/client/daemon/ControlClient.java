package org.holdfast.client.daemon;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;

/** Asks the running daemon something over its control socket ({@code run-now}, {@code status}). */
public final class ControlClient {
    private static final ObjectMapper JSON = new ObjectMapper();

    private ControlClient() {
    }

    /**
     * Sends {@code request} and returns the daemon's answer. No daemon, or a socket this user may not
     * use, is an {@link AgentException} saying so; an answer with {@code ok: false} is returned as is.
     */
    public static JsonNode call(Path socket, Map<String, Object> request) {
        if (!Files.exists(socket)) {
            throw new AgentException(ExitCode.NETWORK, "no agent daemon socket at " + socket,
                    "start the daemon (holdfast-agent daemon --config FILE, or systemctl start holdfast-agent), or name its"
                            + " socket with --socket or its config with --config");
        }
        try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            ch.connect(UnixDomainSocketAddress.of(socket));
            OutputStream out = Channels.newOutputStream(ch);
            out.write((JSON.writeValueAsString(request) + "\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
            InputStream in = new BufferedInputStream(Channels.newInputStream(ch));
            String line = ControlLines.read(in, ControlLines.MAX_ANSWER);
            if (line == null) {
                throw new AgentException(ExitCode.NETWORK, "the agent daemon closed " + socket + " without answering",
                        "look at the daemon's log (journalctl -u holdfast-agent)");
            }
            return JSON.readTree(line);
        } catch (AccessDeniedException e) {
            throw denied(socket, e);
        } catch (IOException e) {
            if (String.valueOf(e.getMessage()).contains("Permission denied")) {
                throw denied(socket, e);
            }
            throw new AgentException(ExitCode.NETWORK, "cannot talk to the agent daemon on " + socket + ": " + e.getMessage(),
                    "check that the daemon runs (a socket left by a crashed daemon is replaced at its next start)", e);
        }
    }

    private static AgentException denied(Path socket, IOException e) {
        return new AgentException(ExitCode.LOCAL_IO, "cannot use the agent daemon's socket " + socket + ": Permission denied",
                "run this as the user the daemon runs as (the socket is mode 0600), or as root", e);
    }
}
