package org.holdfast.client.net;

import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import java.io.IOException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLException;
import javax.net.ssl.X509ExtendedTrustManager;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;
import org.holdfast.client.IoReasons;
import org.holdfast.common.protocol.TlsEngines;
import org.holdfast.common.tls.CertificateFingerprint;
import org.holdfast.common.tls.PemTrust;

/**
 * How the agent decides that it talks to the right server (docs/agent.md, "Verifying the server"):
 * <ul>
 * <li>{@link #caCertificates}: the certificate chains to a CA in a PEM file and names the host
 *     ({@code --ca-cert}); PKIX and host name checks are the JDK's;</li>
 * <li>{@link #pinned}: the certificate's SHA-256 fingerprint is the one given ({@code --fingerprint});
 *     no CA and no host name check, the pin is stronger;</li>
 * <li>{@link #remembered}: the fingerprint the known-servers file holds for this address; with no
 *     entry the connection is refused and the presented fingerprint printed, never trusted blindly
 *     (the handshake is let finish only to recognise an HTTP port; no frame is sent);</li>
 * <li>{@link #plain}: no TLS ({@code --no-tls}, for a server with TLS off).</li>
 * </ul>
 * A refusal is an {@link AgentException} naming the presented fingerprint (and the expected one):
 * {@link ExitCode#INTEGRITY} for a mismatch or a certificate the CA does not vouch for (the server's
 * identity failed verification, possibly an interception; the server itself refused nothing), and
 * {@link ExitCode#USAGE} for an unknown server (the command line must say whom to trust).
 */
public final class ServerTrust {
    /** System property that picks the TLS engine: auto (default), openssl or jdk. */
    public static final String ENGINE_PROPERTY = "holdfast.tls.engine";

    private enum Mode { PLAIN, CA, PIN, REMEMBERED }

    private final Mode mode;
    private final CertificateFingerprint expected;
    private final Path source;
    private final X509ExtendedTrustManager ca;

    private ServerTrust(Mode mode, CertificateFingerprint expected, Path source, X509ExtendedTrustManager ca) {
        this.mode = mode;
        this.expected = expected;
        this.source = source;
        this.ca = ca;
    }

    /** No TLS at all. */
    public static ServerTrust plain() {
        return new ServerTrust(Mode.PLAIN, null, null, null);
    }

    /** Trust exactly the certificate with this fingerprint. */
    public static ServerTrust pinned(CertificateFingerprint fingerprint) {
        return new ServerTrust(Mode.PIN, fingerprint, null, null);
    }

    /** Trust what {@code known} remembers for {@code server}, or nothing. */
    public static ServerTrust remembered(KnownServers known, ServerAddress server) {
        return new ServerTrust(Mode.REMEMBERED, known.lookup(server).orElse(null), known.file(), null);
    }

    /** Trust certificates issued by a CA in {@code pemFile} (one or more PEM certificates) for the server's host name. */
    public static ServerTrust caCertificates(Path pemFile) {
        try {
            return new ServerTrust(Mode.CA, null, pemFile, PemTrust.caCertificates(pemFile));
        } catch (IOException e) {
            throw IoReasons.failure(ExitCode.USAGE, "cannot read --ca-cert", pemFile, e,
                    "name a readable PEM file holding the CA certificate(s)");
        } catch (CertificateException e) {
            throw new AgentException(ExitCode.USAGE, "--ca-cert " + pemFile + " is not a PEM certificate file: " + e.getMessage(),
                    "name a PEM file holding the CA certificate(s) ('-----BEGIN CERTIFICATE-----')", e);
        } catch (GeneralSecurityException e) {
            throw new AgentException(ExitCode.USAGE, "cannot use --ca-cert " + pemFile + ": " + e.getMessage(),
                    "name a PEM file holding the CA certificate(s)", e);
        }
    }

    /**
     * The TLS engine this agent uses: the system property {@value #ENGINE_PROPERTY} (auto, openssl,
     * jdk; default auto: OpenSSL where netty-tcnative loads, else the JDK's).
     */
    public static TlsEngines.Engine engine() {
        try {
            return TlsEngines.choose(System.getProperty(ENGINE_PROPERTY));
        } catch (IllegalArgumentException e) {
            throw new AgentException(ExitCode.USAGE, "-D" + ENGINE_PROPERTY + ": " + e.getMessage(),
                    "set it to auto, openssl or jdk in JAVA_OPTS, or leave it out");
        }
    }

    /** True unless {@link #plain()}. */
    public boolean usesTls() {
        return mode != Mode.PLAIN;
    }

    /** True if a successful handshake confirms the server by an explicit option, so it may be remembered. */
    public boolean confirmsExplicitly() {
        return mode == Mode.CA || mode == Mode.PIN;
    }

    /** A fresh check for one connection to {@code server}: the TLS client context and what it saw. */
    Check check(ServerAddress server) {
        return new Check(server);
    }

    /** One connection's verification: records the presented fingerprint and, on refusal, why. */
    final class Check extends PemTrust.ServerCheck {
        private final ServerAddress server;
        private volatile CertificateFingerprint presented;
        private volatile AgentException refusal;

        private Check(ServerAddress server) {
            this.server = server;
        }

        /**
         * A client handler for {@code server} on {@code engine} (see {@link TlsEngines}), with this
         * check as its trust manager and host name verification in CA mode.
         */
        SslHandler newHandler(TlsEngines.Engine engine, ByteBufAllocator alloc) {
            try {
                SslContext ctx = TlsEngines.configure(SslContextBuilder.forClient(), engine).trustManager(this).build();
                SslHandler handler = ctx.newHandler(alloc, server.host(), server.port());
                if (mode == Mode.CA) {
                    SSLEngine e = handler.engine();
                    SSLParameters p = e.getSSLParameters();
                    p.setEndpointIdentificationAlgorithm("HTTPS");
                    e.setSSLParameters(p);
                }
                return TlsEngines.tune(handler, engine);
            } catch (SSLException | RuntimeException e) {
                throw new AgentException(ExitCode.INTERNAL, "cannot set up TLS with the " + TlsEngines.describe(engine) + ": "
                        + e.getMessage(), "retry with JAVA_OPTS=-D" + ENGINE_PROPERTY + "=jdk", e);
            }
        }

        /** The server certificate's fingerprint, once the handshake got that far. */
        CertificateFingerprint presented() {
            return presented;
        }

        /** Why the certificate was refused, or null. */
        AgentException refusal() {
            return refusal;
        }

        /**
         * True if the server is unknown (remembered mode, no entry): the handshake was let finish, but
         * the connection is refused all the same, after a look at whether it is an HTTP port; nothing
         * secret is sent to it.
         */
        boolean unknownServer() {
            return mode == Mode.REMEMBERED && expected == null && refusal != null;
        }

        @Override
        protected void checkServer(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
            if (chain == null || chain.length == 0) {
                throw refuse(new AgentException(ExitCode.INTEGRITY, "server " + server + " presented no certificate",
                        "check that --server names a Holdfast ingest port"));
            }
            CertificateFingerprint got = CertificateFingerprint.of(chain[0]);
            presented = got;
            switch (mode) {
                case PIN -> {
                    if (!got.equals(expected)) {
                        throw refuse(new AgentException(ExitCode.INTEGRITY, "server " + server
                                + " presented a certificate with SHA-256 fingerprint " + got + ", but --fingerprint expects "
                                + expected + "; refusing to connect",
                                "compare both with the fingerprint the server logs at start; if the server's certificate was"
                                        + " replaced on purpose, pass the new one with --fingerprint (an agent daemon: set"
                                        + " trust.fingerprint in its config and restart it), otherwise the connection may be"
                                        + " intercepted"));
                    }
                }
                case REMEMBERED -> {
                    if (expected == null) {
                        // not thrown: the handshake ends so that the connection can tell an HTTP port (see unknownServer)
                        refusal = new AgentException(ExitCode.USAGE, "server " + server + " is not known to this agent"
                                + " (no entry in " + source + "); its certificate's SHA-256 fingerprint is " + got,
                                "check that fingerprint against the one the server logs at start (or 'openssl x509 -noout"
                                        + " -fingerprint -sha256 -in <data-dir>/tls/server.crt' on the server), then run again"
                                        + " with --fingerprint " + got + " (it is remembered after that), or use --ca-cert FILE");
                        return;
                    }
                    if (!got.equals(expected)) {
                        throw refuse(new AgentException(ExitCode.INTEGRITY, "server " + server
                                + " presented a certificate with SHA-256 fingerprint " + got + ", but " + source
                                + " remembers " + expected + " for it; refusing to connect",
                                "if the server's certificate was replaced on purpose, check the new fingerprint with its"
                                        + " operator and run once with --fingerprint " + got
                                        + "; otherwise the connection may be intercepted"));
                    }
                }
                case CA -> {
                    try {
                        checkWithCa(ca, chain, authType, engine);
                    } catch (CertificateException e) {
                        throw refuse(new AgentException(ExitCode.INTEGRITY, "server " + server + "'s certificate (SHA-256 "
                                + got + ") is not trusted by --ca-cert " + source + ": " + e.getMessage(),
                                "check that --ca-cert holds the CA that issued the server's certificate and that --server"
                                        + " uses a host name the certificate names; or pin it with --fingerprint"));
                    }
                }
                default -> throw new CertificateException("TLS is off for this connection");
            }
        }

        private CertificateException refuse(AgentException why) {
            refusal = why;
            return new CertificateException(why.getMessage());
        }
    }
}
