package org.holdfast.server.ingest;

import io.netty.channel.Channel;
import java.util.function.Consumer;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.PayloadCodec;
import org.holdfast.common.protocol.ProtocolException;
import org.holdfast.common.protocol.Restore;
import org.holdfast.server.catalog.SnapshotRecord;
import org.holdfast.server.catalog.UnknownSnapshotException;
import org.holdfast.server.catalog.VolumeRecord;

/**
 * The restore running on one agent connection, at most one at a time: RESTORE's volume, snapshot
 * and start LBN looked up, then its {@link RestoreStream}, pumped again whenever the channel drains.
 * Lane only.
 */
final class ConnectionRestore {
    private final IngestServer server;
    private final AgentAccess access;
    private final SerialExecutor lane;
    private final Consumer<Throwable> fail;
    private RestoreStream restore;

    /** {@code fail}: how the connection ends when the stream fails (on the lane). */
    ConnectionRestore(IngestServer server, AgentAccess access, SerialExecutor lane, Consumer<Throwable> fail) {
        this.server = server;
        this.access = access;
        this.lane = lane;
        this.fail = fail;
    }

    /** True while a restore streams on this connection. */
    boolean running() {
        return restore != null;
    }

    /** Starts streaming the snapshot RESTORE names (of {@code volume}, already authorized) to {@code channel}. */
    void start(Restore r, VolumeId volume, Channel channel, int protocolVersion) {
        var catalog = server.services().catalog();
        VolumeRecord v = catalog.requireVolume(volume);
        SnapshotRecord s = catalog.snapshot(v, r.sequence()).orElseThrow(() -> new UnknownSnapshotException(volume.name(), r.sequence()));
        if (r.fromLbn() > s.blockCount()) {
            throw new ProtocolException(ErrorCode.BAD_FRAME, "fromLbn " + r.fromLbn() + " is past the end of snapshot "
                    + r.sequence() + " (" + s.blockCount() + " blocks)");
        }
        String restored = volume.name();
        RestoreStream stream = new RestoreStream(catalog, server.services().blocks(), v, s, r.fromLbn(), channel, lane,
                fail, () -> restore = null).onSent(n -> server.observe(o -> o.restored(restored, n)))
                .keepAlive(RestoreStream.keepAliveEvery(server.settings().idleTimeout()))
                .framesOnWire(protocolVersion >= PayloadCodec.FRAMES_SINCE_VERSION);
        restore = stream;
        access.audit("snapshot.restore", "volume:" + volume + "@" + r.sequence(), "ok", r.fromLbn() > 0 ? "from LBN " + r.fromLbn() : "");
        stream.start();
    }

    /** Sends what the channel has room for, if a restore runs: called when the channel became writable. */
    void pump() {
        if (restore != null) {
            restore.pump();
        }
    }

    /** Stops a running restore (if any). */
    void close() {
        if (restore != null) {
            restore.close();
            restore = null;
        }
    }
}
