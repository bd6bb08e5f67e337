package org.holdfast.server.api;

import org.holdfast.server.app.OnStandaloneOrMaster;
import org.holdfast.server.ingest.IngestServer;
import org.holdfast.server.security.tls.ServerCertificate;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Conditional;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/** What an agent needs to reach this server (viewer and up): the agent port, TLS, the certificate to pin, the version. */
@RestController
@Conditional(OnStandaloneOrMaster.class)
public class ServerController {
    private static final String VERSION_PREFIX = "holdfast-server/";

    private final IngestServer ingest;
    private final ObjectProvider<ServerCertificate> certificate;

    public ServerController(IngestServer ingest, ObjectProvider<ServerCertificate> certificate) {
        this.ingest = ingest;
        this.certificate = certificate;
    }

    /**
     * {@code agentHost} is the address the agent port is bound to, null when it listens on every
     * address (then use the host name the caller reached this server by); {@code fingerprint} and
     * {@code certificateNotAfter} are null with TLS off.
     */
    public record ServerView(String version, String agentHost, int agentPort, boolean tls, String fingerprint,
                             String certificateNotAfter) {
    }

    @GetMapping("/api/v1/server")
    public ServerView server() {
        String host = ingest.settings().host();
        boolean wildcard = host == null || host.isBlank() || host.equals("0.0.0.0") || host.equals("::") || host.equals("[::]");
        String version = ingest.settings().serverVersion();
        if (version.startsWith(VERSION_PREFIX)) {
            version = version.substring(VERSION_PREFIX.length());
        }
        ServerCertificate cert = certificate.getIfAvailable(); // absent with holdfast.tls.enabled=false
        return new ServerView(version, wildcard ? null : host, ingest.port(), cert != null,
                cert == null ? null : cert.fingerprint().toString(), cert == null ? null : cert.notAfter().toString());
    }
}
