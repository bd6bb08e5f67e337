package org.holdfast.server.app;

import org.holdfast.server.ingest.IngestServer;
import org.holdfast.server.security.tls.ServerCertificate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.boot.web.context.WebServerApplicationContext;
import org.springframework.context.ApplicationListener;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;

/**
 * Says once the server is ready which addresses and ports are open, with or without TLS, and the
 * certificate's SHA-256 fingerprint (what an operator gives agents to pin); never the key. With TLS
 * off it warns, so that a lab setting left in production is seen.
 */
@Component
class ListeningReport implements ApplicationListener<ApplicationReadyEvent> {
    private static final Logger LOG = LoggerFactory.getLogger(ListeningReport.class);

    private final ObjectProvider<IngestServer> ingest;
    private final ObjectProvider<ServerCertificate> certificate;
    private final HoldfastProperties props;
    private final Environment env;

    ListeningReport(ObjectProvider<IngestServer> ingest, ObjectProvider<ServerCertificate> certificate, HoldfastProperties props, Environment env) {
        this.ingest = ingest;
        this.certificate = certificate;
        this.props = props;
        this.env = env;
    }

    @Override
    public void onApplicationEvent(ApplicationReadyEvent event) {
        String httpHost = env.getProperty("server.address", "0.0.0.0");
        String http = event.getApplicationContext() instanceof WebServerApplicationContext w && w.getWebServer() != null
                ? String.valueOf(w.getWebServer().getPort()) : env.getProperty("server.port", "8080");
        boolean worker = props.cluster().clusterRole() == org.holdfast.server.cluster.ClusterRole.WORKER;
        String agents = worker ? "no port (role worker: agents talk to the master)" : props.ingest().host() + ":" + ingest.getObject().port();
        ServerCertificate cert = certificate.getIfAvailable();
        if (cert == null) {
            LOG.warn("TLS is OFF (holdfast.tls.enabled=false): HTTP and the agent port carry tokens and backup data in the clear;"
                    + " use this only in a lab or for benchmarks");
            LOG.info("listening: HTTP (REST API, console) on {}:{}, agents (plain TCP) on {}", httpHost, http, agents);
            return;
        }
        LOG.info("listening: HTTPS (REST API, console) on {}:{}, agents (TLS) on {}", httpHost, http, agents);
        LOG.info("TLS certificate SHA-256 fingerprint {} ({}; valid until {}); agents pin it with --fingerprint {}",
                cert.fingerprint(), cert.origin(), cert.notAfter(), cert.fingerprint());
    }
}
