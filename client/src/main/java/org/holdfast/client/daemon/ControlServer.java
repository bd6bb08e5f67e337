package org.holdfast.client.daemon;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;
import jdk.net.ExtendedSocketOptions;
import jdk.net.UnixDomainPrincipal;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;

/**
 * The daemon's end of the control socket: a Unix domain socket of mode 0600 in the state
 * directory, so only the daemon's user (and root) may ask it anything. Each connection carries one
 * request and its answer ({@link ControlLines}); each is served on its own thread, because a
 * {@code run-now} that waits holds its connection for the length of a backup.
 */
final class ControlServer implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Path socket;
    private final ServerSocketChannel server;
    private final Function<JsonNode, Map<String, Object>> handler;
    private final Exec exec;
    private final DaemonLog log;
    private final Thread acceptor;
    private volatile boolean closed;

    /** Runs a handed-off command ({@code "command":"exec"}), printing to the given streams; returns its exit code. */
    interface Exec {
        int run(JsonNode request, PrintStream out, PrintStream err);
    }

    /**
     * Binds {@code socket} (replacing a stale one: the caller holds the state directory's lock) and starts
     * serving; {@code exec} runs handed-off commands, or is null if this daemon takes none.
     */
    ControlServer(Path socket, Function<JsonNode, Map<String, Object>> handler, Exec exec, DaemonLog log) {
        this.socket = socket;
        this.handler = handler;
        this.exec = exec;
        this.log = log;
        int length = pathBytes(socket);
        if (length > MAX_SOCKET_PATH_BYTES) {
            throw new AgentException(ExitCode.USAGE, "the daemon's control socket " + socket + " is a path of " + length
                    + " bytes; a Unix socket path may have at most " + MAX_SOCKET_PATH_BYTES,
                    // the socket is always <state-dir>/agent.sock: there is no socket setting to shorten
                    "give the daemon a state directory (state-dir: in its config) of at most "
                            + (MAX_SOCKET_PATH_BYTES - 1 - pathBytes(socket.getFileName())) + " bytes");
        }
        try {
            Files.deleteIfExists(socket);
            server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
            // bound under a temporary name, made 0600, then renamed: the socket never exists at its
            // path with the process umask's wider mode (a caller, or a test, could see it in between)
            Path bound = temporaryName(socket);
            Files.deleteIfExists(bound);
            server.bind(UnixDomainSocketAddress.of(bound));
            Files.setPosixFilePermissions(bound, PosixFilePermissions.fromString("rw-------"));
            Files.move(bound, socket, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot listen on " + socket + ": " + e.getMessage(), e);
        }
        acceptor = new Thread(this::accept, "holdfast-control");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** The longest Unix socket path the JDK binds on Linux (sun_path holds 108 bytes; 107 fails here). */
    static final int MAX_SOCKET_PATH_BYTES = 106;

    /**
     * Where the socket is bound before its rename: {@code <name>.new}, or {@code .new} beside it when
     * that would pass the path limit that the socket's own name keeps (a daemon whose socket fitted
     * failed to start because of the longer temporary name). Fixed names: only the daemon holding
     * the state directory's lock binds here, and it removes a killed daemon's leftover first.
     */
    static Path temporaryName(Path socket) {
        Path usual = socket.resolveSibling(socket.getFileName() + ".new");
        return pathBytes(usual) <= MAX_SOCKET_PATH_BYTES ? usual : socket.resolveSibling(".new");
    }

    private static int pathBytes(Path p) {
        return p.toString().getBytes(StandardCharsets.UTF_8).length;
    }

    private void accept() {
        while (!closed) {
            try {
                SocketChannel ch = server.accept();
                Thread t = new Thread(() -> serve(ch), "holdfast-control-request");
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                if (!closed) {
                    log.info("control socket: accept failed: " + e.getMessage());
                }
            }
        }
    }

    private void serve(SocketChannel ch) {
        try (ch) {
            Map<String, Object> answer;
            if (!allowed(ch)) {
                answer = error("permission denied: only the daemon's user or root may use this socket");
            } else {
                String line = ControlLines.read(new BufferedInputStream(Channels.newInputStream(ch)), ControlLines.MAX_REQUEST);
                if (line == null) {
                    return;
                }
                JsonNode request;
                try {
                    request = JSON.readTree(line);
                } catch (IOException e) {
                    request = null;
                }
                if (exec != null && request != null && "exec".equals(request.path("command").asText())) {
                    exec(ch, request);
                    return;
                }
                answer = request == null || !request.isObject() ? error("the request is not a JSON object") : handler.apply(request);
            }
            OutputStream out = Channels.newOutputStream(ch);
            out.write((JSON.writeValueAsString(answer) + "\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
        } catch (IOException | RuntimeException e) {
            log.info("control socket: request failed: " + e.getMessage());
        }
    }

    /**
     * A handed-off command, answered with {@code {"started":true}}, then {@code out}/{@code err} frames as it
     * prints, then {@code {"exit":N}}; refused ({@code ok:false}) unless the peer is the daemon's own user
     * (not even root), since what the command writes gets the daemon's ownership.
     */
    private void exec(SocketChannel ch, JsonNode request) throws IOException {
        OutputStream raw = Channels.newOutputStream(ch);
        HandoffStream.FrameWriter frames = frame -> {
            synchronized (raw) {
                raw.write((JSON.writeValueAsString(frame) + "\n").getBytes(StandardCharsets.UTF_8));
                raw.flush();
            }
        };
        String peer = peerUser(ch);
        String owner = Files.getOwner(socket).getName();
        if (peer != null && !peer.equals(owner)) {
            frames.write(error("handoff refused: the daemon runs as " + owner + ", the caller is " + peer
                    + " (files it writes would belong to " + owner + ")"));
            return;
        }
        frames.write(Map.of("started", true));
        int code;
        try (PrintStream out = new PrintStream(new HandoffStream("out", frames), true, StandardCharsets.UTF_8);
                PrintStream err = new PrintStream(new HandoffStream("err", frames), true, StandardCharsets.UTF_8)) {
            code = exec.run(request, out, err);
        }
        frames.write(Map.of("exit", code));
    }

    /** The peer's user name, or null where the platform gives no peer credentials. */
    private static String peerUser(SocketChannel ch) {
        try {
            return ch.getOption(ExtendedSocketOptions.SO_PEERCRED).user().getName();
        } catch (IOException | UnsupportedOperationException e) {
            return null;
        }
    }

    /** Defence in depth beside the socket's mode: the peer must be the socket's owner (the daemon's user) or root. */
    private boolean allowed(SocketChannel ch) {
        try {
            UnixDomainPrincipal peer = ch.getOption(ExtendedSocketOptions.SO_PEERCRED);
            return peer.user().equals(Files.getOwner(socket)) || peer.user().getName().equals("root");
        } catch (IOException | UnsupportedOperationException e) {
            return true; // no peer credentials on this platform: the socket's mode 0600 decides alone
        }
    }

    static Map<String, Object> error(String message) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("ok", false);
        m.put("error", message);
        return m;
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            server.close();
            Files.deleteIfExists(socket);
        } catch (IOException e) {
            log.info("control socket: cannot remove " + socket + ": " + e.getMessage());
        }
    }
}
