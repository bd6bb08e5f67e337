package org.holdfast.server.ingest;

import java.time.Duration;
import org.holdfast.common.protocol.FrameDecoder;
import org.holdfast.common.protocol.ProtocolLimits;

/**
 * Resource limits of the agent port (holdfast.ingest.*, docs/operations.md "Agent port limits").
 *
 * @param beforeHelloBytes most bytes a connection may send before its HELLO is accepted
 * @param inflightBytes server-wide budget of frames being received or waiting for a session lane;
 *                      at least one largest frame
 * @param minFrameRate bytes per second a frame must arrive at once its header is in (time the server
 *                     itself paused reading does not count)
 * @param frameGrace time every frame gets on top of its size at {@code minFrameRate}
 * @param maxConnections most agent connections open at once
 * @param maxConnectionsPerSource most agent connections open at once from one IP address
 * @param maxVolumeBytes largest logical volume size a backup may declare (BACKUP_BEGIN or COMMIT)
 */
public record IngestLimits(int beforeHelloBytes, long inflightBytes, long minFrameRate, Duration frameGrace, int maxConnections,
                           int maxConnectionsPerSource, long maxVolumeBytes) {
    /** The defaults of holdfast.ingest.*. */
    public static final IngestLimits DEFAULTS = new IngestLimits(64 * 1024, 256L << 20, 64 * 1024, Duration.ofSeconds(30),
            1024, 64, 64L << 40);

    public IngestLimits {
        if (beforeHelloBytes < FrameDecoder.LENGTH_PLUS_MAX_HELLO) {
            throw new IllegalArgumentException("holdfast.ingest.before-hello-bytes must hold a HELLO: at least "
                    + FrameDecoder.LENGTH_PLUS_MAX_HELLO + " bytes, got " + beforeHelloBytes);
        }
        if (inflightBytes < ProtocolLimits.LENGTH_FIELD_BYTES + ProtocolLimits.MAX_FRAME) {
            throw new IllegalArgumentException("holdfast.ingest.max-inflight-bytes must hold one largest frame: at least "
                    + (ProtocolLimits.LENGTH_FIELD_BYTES + ProtocolLimits.MAX_FRAME) + " bytes, got " + inflightBytes);
        }
        if (minFrameRate < 1 || frameGrace == null || frameGrace.isNegative() || frameGrace.isZero()) {
            throw new IllegalArgumentException("holdfast.ingest.min-frame-rate and frame-grace must be positive");
        }
        if (maxConnections < 1 || maxConnectionsPerSource < 1) {
            throw new IllegalArgumentException("holdfast.ingest.max-connections and max-connections-per-source must be at least 1");
        }
        if (maxVolumeBytes < 1) {
            throw new IllegalArgumentException("holdfast.ingest.max-volume-size must be positive");
        }
    }

    /** How long a frame of {@code frameBytes} may take to arrive while the server reads. */
    Duration frameDeadline(long frameBytes) {
        return frameGrace.plusMillis(frameBytes * 1000 / minFrameRate);
    }

    public IngestLimits withInflightBytes(long bytes) {
        return new IngestLimits(beforeHelloBytes, bytes, minFrameRate, frameGrace, maxConnections, maxConnectionsPerSource, maxVolumeBytes);
    }

    public IngestLimits withFrameRate(long bytesPerSecond, Duration grace) {
        return new IngestLimits(beforeHelloBytes, inflightBytes, bytesPerSecond, grace, maxConnections, maxConnectionsPerSource, maxVolumeBytes);
    }

    public IngestLimits withConnections(int total, int perSource) {
        return new IngestLimits(beforeHelloBytes, inflightBytes, minFrameRate, frameGrace, total, perSource, maxVolumeBytes);
    }

    public IngestLimits withMaxVolumeBytes(long bytes) {
        return new IngestLimits(beforeHelloBytes, inflightBytes, minFrameRate, frameGrace, maxConnections, maxConnectionsPerSource, bytes);
    }
}
