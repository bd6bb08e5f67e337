package org.holdfast.client.cli;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.Consumer;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;
import org.holdfast.client.IoReasons;
import org.holdfast.client.StateDirectory;
import org.holdfast.client.net.KnownServers;
import org.holdfast.client.net.ServerAddress;
import org.holdfast.client.net.ServerConnection;
import org.holdfast.client.net.ServerTrust;
import org.holdfast.client.net.VersionRefusedException;
import org.holdfast.client.net.WrongPortException;
import org.holdfast.common.tls.CertificateFingerprint;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.protocol.ProtocolLimits;
import picocli.CommandLine.Option;

/** Options every subcommand takes: where the server is, how to trust it, which volume, how to report. */
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
            description = "Agent token, if the server requires one (default: $HOLDFAST_TOKEN). Prefer --token-file"
                    + " or the variable: a command line is visible to other users in ps.")
    String token;

    @Option(names = "--token-file", paramLabel = "FILE",
            description = "Read the agent token from the first line of FILE (overrides --token and $HOLDFAST_TOKEN).")
    Path tokenFile;

    @Option(names = "--fingerprint", paramLabel = "SHA256",
            description = "Trust the server whose certificate has this SHA-256 fingerprint (as the server logs it;"
                    + " colons and case do not matter), and remember it in the known-servers file.")
    String fingerprint;

    @Option(names = "--ca-cert", paramLabel = "FILE",
            description = "Trust a server certificate issued by a CA in this PEM file for the --server host name,"
                    + " and remember the server in the known-servers file.")
    Path caCert;

    @Option(names = "--known-servers", paramLabel = "FILE",
            description = "Servers confirmed earlier, one 'HOST:PORT FINGERPRINT' per line; without --fingerprint or"
                    + " --ca-cert only the fingerprint remembered here is accepted (default: $XDG_STATE_HOME/holdfast/"
                    + "known-servers, else ~/.local/state/holdfast/known-servers).")
    Path knownServers;

    @Option(names = "--no-tls", description = "Plain TCP, for a server started with holdfast.tls.enabled=false (labs only).")
    boolean noTls;

    @Option(names = "--json", description = "Print the result as JSON on stdout (no progress line).")
    boolean json;

    @Option(names = "--debug", description = "Show stack traces on errors.")
    boolean debug;

    @Option(names = "--protocol-version", paramLabel = "N", defaultValue = "" + ProtocolLimits.PROTOCOL_VERSION, hidden = true,
            description = "Offer this protocol version instead of the newest (behave as an older agent; for interoperability tests).")
    int protocolVersion;

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

    /**
     * How this run verifies the server: {@code --no-tls}, {@code --fingerprint}, {@code --ca-cert}, or
     * the known-servers entry in {@code known} (at most one option; see {@link ServerTrust}); {@code known}
     * is read only when no option is given.
     */
    ServerTrust trust(ServerAddress address, java.util.function.Supplier<Path> known) {
        int given = (noTls ? 1 : 0) + (fingerprint != null ? 1 : 0) + (caCert != null ? 1 : 0);
        if (given > 1) {
            throw new AgentException(ExitCode.USAGE, "--no-tls, --fingerprint and --ca-cert exclude each other",
                    "pass one of them (or none, to trust the fingerprint remembered in the known-servers file)");
        }
        if (noTls) {
            return ServerTrust.plain();
        }
        if (fingerprint != null) {
            try {
                return ServerTrust.pinned(CertificateFingerprint.parse(fingerprint));
            } catch (IllegalArgumentException e) {
                throw new AgentException(ExitCode.USAGE, "invalid --fingerprint: " + e.getMessage(),
                        "copy the SHA-256 fingerprint the server logs at start, e.g. AB:CD:...:EF (64 hex digits)");
            }
        }
        if (caCert != null) {
            return ServerTrust.caCertificates(caCert);
        }
        return ServerTrust.remembered(new KnownServers(known.get()), address);
    }

    /** The token from --token-file, else --token / $HOLDFAST_TOKEN, else empty. */
    String token() {
        if (tokenFile == null) {
            return token == null ? "" : token.strip();
        }
        try (java.io.BufferedReader r = Files.newBufferedReader(tokenFile, StandardCharsets.UTF_8)) {
            String line = r.readLine();
            if (line == null || line.isBlank()) {
                throw new AgentException(ExitCode.USAGE, "--token-file " + tokenFile + " is empty",
                        "write the agent token on the file's first line");
            }
            return line.strip();
        } catch (IOException e) {
            throw IoReasons.failure(ExitCode.USAGE, "cannot read --token-file", tokenFile, e,
                    "name a file readable by this user (mode 0600 is enough)");
        }
    }

    /**
     * The known-servers file: {@code --known-servers}, else the one in the {@link StateDirectory}
     * (moved there from {@code ~/.holdfast} on first use, telling {@code notice}).
     */
    Path knownServersFile(Consumer<String> notice) {
        return knownServers != null ? knownServers : StateDirectory.current().resolve(StateDirectory.KNOWN_SERVERS, notice);
    }

    /**
     * Connects (verifying the server), says HELLO and, once the server answered it, remembers a
     * server confirmed by --fingerprint or --ca-cert; {@code notice} hears of a state directory moved to its new place.
     */
    ServerConnection open(Consumer<String> notice) {
        ServerAddress address = address();
        String vol = volume(); // validate before touching the network
        assert vol != null;
        String tok = token();
        ServerTrust trust = trust(address, () -> knownServersFile(notice)); // --no-tls never touches the state directory
        if (!noTls) {
            KnownServers.removeLeftovers(knownServersFile(notice), notice); // a copy that an agent killed in remember() left
        }
        ServerConnection conn = ServerConnection.connect(address, CONNECT_TIMEOUT, trust);
        try {
            try {
                try {
                    conn.hello(agentName(), tok, HELLO_TIMEOUT, protocolVersion);
                } catch (VersionRefusedException e) {
                    if (protocolVersion <= ProtocolLimits.MIN_PROTOCOL_VERSION) {
                        throw e;
                    }
                    // a protocol 2 server takes an offer of exactly 2 and closes the connection on any
                    // other (later servers answer the lower of the two): offer 2 on a new connection
                    conn.close();
                    conn = ServerConnection.connect(address, CONNECT_TIMEOUT, trust);
                    conn.hello(agentName(), tok, HELLO_TIMEOUT, ProtocolLimits.MIN_PROTOCOL_VERSION);
                    notice.accept("the server refused protocol version " + protocolVersion + " (a release of protocol "
                            + ProtocolLimits.MIN_PROTOCOL_VERSION + "): talking version " + ProtocolLimits.MIN_PROTOCOL_VERSION
                            + " instead; upgrade the server to use the newer one");
                }
            } catch (AgentException e) {
                if (tok.isEmpty() && e.getMessage().startsWith(NO_TOKEN_REFUSAL)) {
                    // the generic advice would say to check a token this agent never sent
                    throw new AgentException(e.exitCode(), e.getMessage(), NO_TOKEN_HINT, e);
                }
                if (noTls && e.exitCode() == ExitCode.NETWORK && !(e instanceof WrongPortException)) {
                    throw new AgentException(ExitCode.NETWORK, e.getMessage() + " before answering HELLO over plain TCP",
                            "the server probably requires TLS (the default): run without --no-tls", e);
                }
                throw e;
            }
            // only a Holdfast server that answered HELLO is remembered: never the HTTP port, whose certificate is the same
            if (trust.confirmsExplicitly()) {
                KnownServers servers = new KnownServers(knownServersFile(notice));
                if (!servers.lookup(address).filter(conn.serverFingerprint()::equals).isPresent()) {
                    servers.remember(address, conn.serverFingerprint());
                }
            }
            return conn;
        } catch (RuntimeException e) {
            conn.close();
            throw e;
        }
    }

    private static final String NO_TOKEN_REFUSAL = "server refused: UNAUTHORIZED";
    /** What to do when the server wants a token and none was given. */
    static final String NO_TOKEN_HINT = "give the agent its token: --token-file FILE (the token on the first line) or"
            + " $HOLDFAST_TOKEN; for the daemon, token-file in its config";

    /** This agent's version as HELLO reports it (the jar's Implementation-Version; the release number when run from classes). */
    static final String AGENT_VERSION = java.util.Objects.requireNonNullElse(
            ConnectionOptions.class.getPackage().getImplementationVersion(), "0.1.0");

    /** {@code holdfast-agent/<version>@<host>}: the server records the version from it (docs/protocol.md, HELLO). */
    static String agentName() {
        String name;
        try {
            name = InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            name = "unknown-host";
        }
        String n = "holdfast-agent/" + AGENT_VERSION + "@" + name;
        return n.length() > 200 ? n.substring(0, 200) : n;
    }
}
