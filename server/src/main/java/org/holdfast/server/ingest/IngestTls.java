package org.holdfast.server.ingest;

import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLException;
import org.holdfast.common.protocol.TlsEngines;

/**
 * The agent port's TLS: one Netty {@link SslContext} made from the server's key and certificate
 * chain, on the engine {@link TlsEngines#choose} picks (OpenSSL where netty-tcnative loads, else
 * the JDK's), TLS 1.3/1.2 with AES-GCM only. Both engines are measured in docs/benchmarks.md ("TLS").
 */
public final class IngestTls {
    private final SslContext context;
    private final TlsEngines.Engine engine;

    private IngestTls(SslContext context, TlsEngines.Engine engine) {
        this.context = context;
        this.engine = engine;
    }

    /**
     * A server context presenting {@code chain} (leaf first) with {@code key}, on the engine
     * {@code preference} (auto, openssl, jdk; null is auto) selects.
     *
     * @throws IllegalArgumentException for an unknown preference, or openssl where it cannot load
     * @throws IllegalStateException if the key and chain cannot make a context
     */
    public static IngestTls of(PrivateKey key, List<X509Certificate> chain, String preference) {
        TlsEngines.Engine engine = TlsEngines.choose(preference);
        try {
            SslContext ctx = TlsEngines.configure(SslContextBuilder.forServer(key, chain.toArray(X509Certificate[]::new)), engine)
                    .clientAuth(ClientAuth.NONE)
                    .applicationProtocolConfig(ApplicationProtocolConfig.DISABLED)
                    .build();
            return new IngestTls(ctx, engine);
        } catch (SSLException | RuntimeException e) {
            throw new IllegalStateException("cannot set up TLS for the agent port with the " + TlsEngines.describe(engine) + ": "
                    + e.getMessage() + "; check the server certificate and key, or set holdfast.tls.engine=jdk", e);
        }
    }

    /** The engine in use. */
    public TlsEngines.Engine engine() {
        return engine;
    }

    /** For the start-up log: the engine and, for OpenSSL, the library version. */
    public String describe() {
        return TlsEngines.describe(engine);
    }

    /**
     * Puts a TLS handler (named {@code tls}) at the end of {@code ch}'s pipeline; a client that does
     * not finish the handshake within {@code handshakeTimeoutSeconds} is dropped.
     */
    public void addHandler(Channel ch, long handshakeTimeoutSeconds) {
        SslHandler ssl = newHandler(ch.alloc());
        ssl.setHandshakeTimeout(handshakeTimeoutSeconds, TimeUnit.SECONDS);
        ch.pipeline().addLast("tls", ssl);
    }

    /** A handler for one accepted connection; buffers come from {@code alloc}. */
    public SslHandler newHandler(ByteBufAllocator alloc) {
        return TlsEngines.tune(context.newHandler(alloc), engine);
    }
}
