package org.holdfast.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufAllocatorMetricProvider;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorLinger;
import org.holdfast.common.protocol.Hello;
import org.holdfast.common.protocol.HelloOk;
import org.holdfast.common.protocol.MessageType;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.server.catalog.ReferenceGuard;
import org.holdfast.server.security.tls.ServerCertificate;
import org.holdfast.server.security.tls.ServerCertificateLoader;
import org.holdfast.server.security.tls.TlsSettings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Attacks on a refused agent connection over TLS while it lingers: a close_notify in the middle
 * ends it, and TLS-record-shaped bytes sent after the close_notify neither hold it open past the
 * linger nor pile up in the server's memory.
 */
class TlsLingerAttackTest {
    private static final Duration BOUND = Duration.ofMillis(ErrorLinger.ERROR_LINGER_MILLIS + 3_000);

    @TempDir
    Path dir;
    private ServerCertificate cert;
    private IngestHarness harness;
    private SSLContext client;
    private SSLSocket tls; // the refused agent's TLS socket

    @BeforeEach
    void start() throws Exception {
        cert = ServerCertificateLoader.load(TlsSettings.selfSigned(dir.resolve("tls")));
        harness = new IngestHarness(dir.resolve("store"), 0, ReferenceGuard.NONE,
                IngestSettings.loopback().withTls(IngestTls.of(cert.privateKey(), cert.chain(), "auto")));
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        ks.setCertificateEntry("server", cert.certificate());
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(ks);
        client = SSLContext.getInstance("TLS");
        client.init(null, tmf.getTrustManagers(), null);
    }

    @AfterEach
    void stop() {
        harness.close();
    }

    /** A refused agent over TLS on top of {@code plain}: greeted, then its oversized frame refused and the ERROR read. */
    private RefusedWriter refused(Socket plain) throws Exception {
        plain.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), harness.port()), 5000);
        tls = (SSLSocket) client.getSocketFactory().createSocket(plain, "localhost", harness.port(), false);
        tls.startHandshake();
        RefusedWriter w = new RefusedWriter(tls);
        w.send(RefusedWriter.frame(new Hello(ProtocolLimits.PROTOCOL_VERSION, "tls-linger-attack", TestTokens.DEFAULT_AGENT)));
        assertThat(w.read()).isInstanceOf(HelloOk.class);
        w.send(RefusedWriter.oversizedHeader(MessageType.BLOCKS.code()));
        w.send(new byte[256 << 10]); // still writing the refused frame
        assertThat(w.expectError().code()).isEqualTo(ErrorCode.LIMIT_EXCEEDED);
        return w;
    }

    @Test
    void closeNotifyWhileLingering_closedWithinTheLinger() throws Exception {
        try (Socket plain = new Socket()) {
            RefusedWriter w = refused(plain);
            tls.shutdownOutput(); // close_notify; the socket still reads
            assertThat(w.closedAfterError()).isLessThan(BOUND);
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> harness.server().openConnections() == 0);
    }

    @Test
    void recordsFloodedAfterACloseNotify_cutOffAndNothingPilesUp() throws Exception {
        long directBefore = directMemory();
        AtomicLong maxDirect = new AtomicLong(directBefore);
        AtomicLong sent = new AtomicLong();
        try (Socket plain = new Socket()) {
            RefusedWriter w = refused(plain);
            tls.shutdownOutput(); // close_notify
            OutputStream raw = plain.getOutputStream();
            byte[] record = new byte[5 + (16 << 10)];
            new Random(15).nextBytes(record);
            record[0] = 0x17; // application data, TLS 1.2 record version, 16 KiB: shaped like records, never decryptable
            record[1] = 0x03;
            record[2] = 0x03;
            record[3] = 0x40;
            record[4] = 0x00;
            long started = System.nanoTime();
            long cutAt = 0;
            try {
                for (int i = 0; i < 20_000 && System.nanoTime() - started < BOUND.toNanos() + 5_000_000_000L; i++) { // up to 320 MiB
                    raw.write(record);
                    sent.addAndGet(record.length);
                    if (i % 16 == 0) {
                        maxDirect.accumulateAndGet(directMemory(), Math::max);
                    }
                }
            } catch (IOException cut) {
                cutAt = System.nanoTime();
            }
            assertThat(cutAt).as("the writes were cut off (%d bytes sent)", sent.get()).isPositive();
            assertThat(Duration.ofNanos(cutAt - started)).isLessThan(BOUND);
        }
        assertThat(maxDirect.get() - directBefore).as("direct memory grown while %d bytes were sent after close_notify", sent.get())
                .isLessThan(32L << 20);
        await().atMost(Duration.ofSeconds(5)).until(() -> harness.server().openConnections() == 0);
    }

    /** Direct memory of the allocator the server's channels use (Netty's default). */
    private static long directMemory() {
        return ((ByteBufAllocatorMetricProvider) ByteBufAllocator.DEFAULT).metric().usedDirectMemory();
    }
}
