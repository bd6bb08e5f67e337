package org.holdfast.server.app;

import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.holdfast.server.security.tls.ServerCertificate;
import org.holdfast.server.security.tls.ServerCertificateLoader;
import org.holdfast.server.security.tls.TlsSettings;
import org.holdfast.server.store.DataDirectory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.ssl.DefaultSslBundleRegistry;
import org.springframework.boot.ssl.SslBundle;
import org.springframework.boot.ssl.SslBundleKey;
import org.springframework.boot.ssl.SslStoreBundle;
import org.springframework.boot.web.server.Ssl;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.boot.web.servlet.server.ConfigurableServletWebServerFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;

/**
 * TLS on both ports ({@code holdfast.tls.enabled}, on by default): one {@link ServerCertificate}
 * serves HTTPS on {@code server.port} and the agent port ({@link CoreConfiguration} hands its
 * {@link javax.net.ssl.SSLContext} to the ingest server). With TLS off neither bean exists and both
 * ports are plain; {@link ListeningReport} warns about it at start.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(name = "holdfast.tls.enabled", havingValue = "true", matchIfMissing = true)
public class TlsConfiguration {
    /** The name of the bundle Tomcat serves. */
    static final String BUNDLE = "holdfast";

    /** Loaded (or made) once; depends on the data directory so that its lock is held before tls/ is written. */
    @Bean
    ServerCertificate serverCertificate(HoldfastProperties props, DataDirectory dataDirectory,
                                        @Value("${server.address:}") String serverAddress) {
        HoldfastProperties.Tls t = props.tls();
        return ServerCertificateLoader.load(new TlsSettings(t.certificate(), t.privateKey(), t.keystore(), t.keystorePassword(),
                dataDirectory.root().resolve("tls"), certificateNames(props.ingest().host(), props.cluster().host(), serverAddress)));
    }

    /**
     * The configured addresses a self-signed certificate names: the agent port's, the cluster port's
     * (a worker's own address) and HTTPS's ({@code server.address}), so that curl and browsers reach
     * a node bound to one address (a worker on 10.0.0.12, a lab on 127.0.0.3) without a name mismatch.
     */
    static List<String> certificateNames(String ingestHost, String clusterHost, String serverAddress) {
        List<String> names = new ArrayList<>();
        for (String n : new String[] {ingestHost, clusterHost, serverAddress}) {
            String name = n == null ? "" : n.strip().replaceAll("^\\[(.*)]$", "$1"); // [::1] as a URL writes it
            if (!name.isEmpty() && !names.contains(name)) {
                names.add(name);
            }
        }
        return names;
    }

    /** HTTPS with the same certificate; runs after Boot's own customizer, which would set its (empty) SSL settings. */
    @Bean
    WebServerFactoryCustomizer<ConfigurableServletWebServerFactory> httpsCustomizer(ServerCertificate certificate) {
        return new HttpsCustomizer(certificate);
    }

    /** Serves {@code server.port} over TLS from an in-memory keystore (its password is random and lives only here). */
    static final class HttpsCustomizer implements WebServerFactoryCustomizer<ConfigurableServletWebServerFactory>, Ordered {
        private final ServerCertificate certificate;

        HttpsCustomizer(ServerCertificate certificate) {
            this.certificate = certificate;
        }

        @Override
        public void customize(ConfigurableServletWebServerFactory factory) {
            byte[] random = new byte[16];
            new SecureRandom().nextBytes(random);
            String password = HexFormat.of().formatHex(random);
            SslBundle bundle = SslBundle.of(SslStoreBundle.of(certificate.keyStore(password.toCharArray()), password, null),
                    SslBundleKey.of(password, ServerCertificate.ALIAS));
            factory.setSslBundles(new DefaultSslBundleRegistry(BUNDLE, bundle));
            factory.setSsl(Ssl.forBundle(BUNDLE));
        }

        @Override
        public int getOrder() {
            return Ordered.LOWEST_PRECEDENCE;
        }
    }
}
