package org.holdfast.server.ingest;

/**
 * Settings of the ingest server. {@code port} 0 picks an ephemeral port (tests).
 * {@code segmentMaxEntries} is U_segment, the longest input segment handed to the dedup engine.
 * A connection that neither sends nor receives anything for {@code idleTimeout} is closed (its
 * backup abandoned), so a vanished agent cannot hold a volume's lock for long. {@code tls}, when
 * not null, is the server-side TLS (engine and context) every connection is wrapped in (docs/protocol.md: the
 * frames run inside TLS); null serves plain TCP (tests, and {@code holdfast.tls.enabled=false}).
 * {@code limits} bound what connections may cost ({@link IngestLimits}). {@code spill} bounds the
 * per-block state a backup session keeps in memory ({@link SessionSpill}).
 */
public record IngestSettings(String host, int port, int sessionThreads, int segmentMaxEntries, int maxQueuedFrames,
                             long maxQueuedBytes, java.time.Duration idleTimeout, String serverVersion,
                             IngestTls tls, IngestLimits limits, SessionSpill spill) {
    /** The default session spill (into the JVM's temporary directory). */
    public IngestSettings(String host, int port, int sessionThreads, int segmentMaxEntries, int maxQueuedFrames,
                          long maxQueuedBytes, java.time.Duration idleTimeout, String serverVersion, IngestTls tls, IngestLimits limits) {
        this(host, port, sessionThreads, segmentMaxEntries, maxQueuedFrames, maxQueuedBytes, idleTimeout, serverVersion, tls, limits,
                SessionSpill.inTempDir());
    }

    /** Default limits. */
    public IngestSettings(String host, int port, int sessionThreads, int segmentMaxEntries, int maxQueuedFrames,
                          long maxQueuedBytes, java.time.Duration idleTimeout, String serverVersion, IngestTls tls) {
        this(host, port, sessionThreads, segmentMaxEntries, maxQueuedFrames, maxQueuedBytes, idleTimeout, serverVersion, tls,
                IngestLimits.DEFAULTS);
    }

    /** Plain TCP. */
    public IngestSettings(String host, int port, int sessionThreads, int segmentMaxEntries, int maxQueuedFrames,
                          long maxQueuedBytes, java.time.Duration idleTimeout, String serverVersion) {
        this(host, port, sessionThreads, segmentMaxEntries, maxQueuedFrames, maxQueuedBytes, idleTimeout, serverVersion, null);
    }

    public IngestSettings {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("ingest port must be 0..65535, got " + port);
        }
        if (sessionThreads < 1) {
            throw new IllegalArgumentException("need at least one session thread");
        }
        if (segmentMaxEntries < 1 || segmentMaxEntries > 4096) {
            throw new IllegalArgumentException("segmentMaxEntries must be 1..4096");
        }
        if (idleTimeout == null || idleTimeout.isNegative() || idleTimeout.isZero()) {
            throw new IllegalArgumentException("idleTimeout must be positive");
        }
        if (maxQueuedFrames < 1 || maxQueuedBytes < 1) {
            throw new IllegalArgumentException("queue limits must be positive");
        }
        if (limits == null) {
            throw new IllegalArgumentException("limits must not be null");
        }
        if (spill == null) {
            throw new IllegalArgumentException("spill must not be null");
        }
    }

    /** These settings with connections wrapped in TLS from {@code context} (null: plain TCP). */
    public IngestSettings withTls(IngestTls context) {
        return new IngestSettings(host, port, sessionThreads, segmentMaxEntries, maxQueuedFrames, maxQueuedBytes, idleTimeout,
                serverVersion, context, limits, spill);
    }

    /** These settings with other resource limits. */
    public IngestSettings withLimits(IngestLimits other) {
        return new IngestSettings(host, port, sessionThreads, segmentMaxEntries, maxQueuedFrames, maxQueuedBytes, idleTimeout,
                serverVersion, tls, other, spill);
    }

    /** These settings with another session spill. */
    public IngestSettings withSpill(SessionSpill other) {
        return new IngestSettings(host, port, sessionThreads, segmentMaxEntries, maxQueuedFrames, maxQueuedBytes, idleTimeout,
                serverVersion, tls, limits, other);
    }

    /** Loopback, ephemeral port: for tests. */
    public static IngestSettings loopback() {
        return new IngestSettings("127.0.0.1", 0, 4, 1024, 8, 64L << 20, java.time.Duration.ofMinutes(10), "test");
    }
}
