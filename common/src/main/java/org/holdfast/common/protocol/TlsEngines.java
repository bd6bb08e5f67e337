package org.holdfast.common.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import io.netty.handler.ssl.SupportedCipherSuiteFilter;
import java.util.List;
import java.util.Locale;

/**
 * The TLS settings both ends of the agent port share (docs/protocol.md: frames run inside TLS):
 * which engine runs it, TLS 1.3/1.2 and AES-GCM only, and the buffer handling that keeps the
 * JDK engine on its fast path.
 *
 * <p>Engine: Netty's OpenSSL engine (BoringSSL from netty-tcnative) when its native library loads,
 * else the JDK's; {@code auto}, {@code openssl} or {@code jdk} choose (docs/operations.md, "TLS").
 * AES-GCM only because the CPU's AES instructions make it the cheapest AEAD on x86-64, and so that
 * neither CBC nor ChaCha20 (which a JDK client offers) can be negotiated.
 */
public final class TlsEngines {
    /** Which TLS implementation runs a connection. */
    public enum Engine {
        /** Netty's OpenSSL engine (BoringSSL, statically linked in netty-tcnative). */
        OPENSSL,
        /** The JDK's SSLEngine. */
        JDK
    }

    /** TLS 1.3 first; 1.2 for peers that lack it. */
    public static final List<String> PROTOCOLS = List.of("TLSv1.3", "TLSv1.2");
    /** AES-GCM only, AES-128 first: with AES-NI as fast as it gets, and a 128-bit key is ample here. */
    public static final List<String> CIPHER_SUITES = List.of(
            "TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384",
            "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
            "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384");

    private TlsEngines() {
    }

    /**
     * The engine {@code preference} selects on this machine: {@code auto} (or null/blank) is OpenSSL
     * if it loads, else JDK; {@code openssl} insists on it; {@code jdk} is the JDK's.
     *
     * @throws IllegalArgumentException for another word, or for openssl where it cannot load (naming why)
     */
    public static Engine choose(String preference) {
        return choose(preference, openSslAvailable());
    }

    /** {@link #choose(String)} on a machine where OpenSSL does or does not load (tests the fallback). */
    static Engine choose(String preference, boolean openSsl) {
        String p = preference == null || preference.isBlank() ? "auto" : preference.trim().toLowerCase(Locale.ROOT);
        switch (p) {
            case "auto":
                return openSsl ? Engine.OPENSSL : Engine.JDK;
            case "openssl":
                if (!openSsl) {
                    throw new IllegalArgumentException("the TLS engine 'openssl' was asked for, but Netty's OpenSSL engine does not"
                            + " load on this machine (" + OpenSsl.unavailabilityCause() + "); use auto or jdk");
                }
                return Engine.OPENSSL;
            case "jdk":
                return Engine.JDK;
            default:
                throw new IllegalArgumentException("the TLS engine must be auto, openssl or jdk, got '" + preference + "'");
        }
    }

    /** True if netty-tcnative's native library loaded. */
    public static boolean openSslAvailable() {
        return OpenSsl.isAvailable();
    }

    /** For logs: the engine and, for OpenSSL, the library's version. */
    public static String describe(Engine engine) {
        return engine == Engine.OPENSSL ? "OpenSSL engine (" + OpenSsl.versionString() + ")" : "JDK engine";
    }

    /**
     * Sets {@code builder}'s provider for {@code engine}, and the protocols and cipher suites above.
     * BoringSSL's TLS 1.3 suites are fixed (AES-GCM, plus ChaCha20 for a peer that asks for it first,
     * which no Holdfast agent does), so OpenSSL is given exactly that set: naming fewer makes Netty
     * print a notice on every agent run, and naming none turns TLS 1.3 off.
     */
    public static SslContextBuilder configure(SslContextBuilder builder, Engine engine) {
        return builder.sslProvider(engine == Engine.OPENSSL ? SslProvider.OPENSSL : SslProvider.JDK)
                .protocols(PROTOCOLS)
                .ciphers(engine == Engine.OPENSSL ? BORINGSSL_SUITES : CIPHER_SUITES, SupportedCipherSuiteFilter.INSTANCE);
    }

    private static final List<String> BORINGSSL_SUITES = java.util.stream.Stream.concat(CIPHER_SUITES.stream(),
            java.util.stream.Stream.of("TLS_CHACHA20_POLY1305_SHA256")).toList();

    /**
     * Tunes a new handler of {@code engine}: the JDK engine gets {@link #HEAP_CUMULATOR}. (JDK 17's
     * AES-GCM decrypts a direct ByteBuffer 16 bytes at a time without the CPU's carry-less multiply,
     * five times slower than a heap one; socket reads arrive in direct buffers.)
     */
    public static SslHandler tune(SslHandler handler, Engine engine) {
        if (engine == Engine.JDK) {
            handler.setCumulator(HEAP_CUMULATOR);
        }
        return handler;
    }

    /** Collects the TLS records read from the socket in heap buffers (copying direct ones in). */
    static final ByteToMessageDecoder.Cumulator HEAP_CUMULATOR = (alloc, cumulation, in) -> {
        try {
            int needed = in.readableBytes();
            if (cumulation.isDirect() || cumulation.writableBytes() < needed || cumulation.refCnt() > 1 || cumulation.isReadOnly()) {
                cumulation = grownHeapCopy(alloc, cumulation, needed);
            }
            cumulation.writeBytes(in);
            return cumulation;
        } finally {
            in.release();
        }
    };

    private static ByteBuf grownHeapCopy(ByteBufAllocator alloc, ByteBuf old, int extra) {
        int want = old.readableBytes() + extra;
        ByteBuf copy = alloc.heapBuffer(alloc.calculateNewCapacity(want, Integer.MAX_VALUE));
        try {
            copy.writeBytes(old);
        } catch (RuntimeException e) {
            copy.release();
            throw e;
        }
        old.release();
        return copy;
    }
}
