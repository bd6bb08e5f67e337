package org.holdfast.server.ingest.cluster;

import io.netty.channel.Channel;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.GcGuardFailed;
import org.holdfast.common.protocol.GcProtect;
import org.holdfast.common.protocol.GcProtected;
import org.holdfast.common.protocol.GcSessionEnd;
import org.holdfast.common.protocol.ProtocolLimits;

/**
 * The master's end of one worker's grace guard (distributed GC, thesis 7.2.4): the worker owns the
 * GC metadata of its range and decides what of it is freed, so a backup in progress protects the
 * PBNs of that range there. {@link #protect} sends GC_PROTECT with a fresh request id and completes
 * with the entries the worker refused (its sweep had chosen them); {@link #sessionEnd} sends
 * GC_SESSION_END (no answer). A GC_GUARD_FAILED fails its call with
 * {@link RangeWorkerFailedException} (the worker's words; nothing of it to rely on); when the link
 * ends, or a call is not answered within the timeout, every pending and later call fails with
 * {@link RangeWorkerLostException}. Used by {@link RangeReferenceGuard}.
 */
public final class RemoteGcGuard extends RangeWorkerCalls {
    private final Channel channel;

    /** Worker {@code name} owning {@code range}, on {@code channel}; a call not answered within {@code timeout} ends the link's use. */
    public RemoteGcGuard(String name, PbnRange range, Channel channel, Duration timeout) {
        super(name, range, channel, timeout);
        this.channel = channel;
    }

    /**
     * Protects {@code pbns[from..from+count)} (each in this worker's range, at most
     * {@link ProtocolLimits#MAX_GC_PROTECT_PBNS}) for session {@code sessionId}; completes with the
     * entries refused (indexes from {@code from}, increasing). With {@code zeroRefused} only those are
     * not protected; without, a refusal means none is.
     *
     * @throws IllegalArgumentException a PBN outside the worker's range, or too many: nothing sent
     */
    public CompletableFuture<int[]> protect(long sessionId, long[] pbns, int from, int count, boolean zeroRefused) {
        if (count < 1 || count > ProtocolLimits.MAX_GC_PROTECT_PBNS) {
            throw new IllegalArgumentException("a GC_PROTECT carries 1.." + ProtocolLimits.MAX_GC_PROTECT_PBNS + " PBNs, not " + count);
        }
        for (int i = from; i < from + count; i++) {
            if (!range.contains(pbns[i])) {
                throw new IllegalArgumentException("PBN " + pbns[i] + " is outside worker " + name + "'s range " + range
                        + "; nothing was sent (protect each PBN on the worker that owns it)");
            }
        }
        long id = calls.nextId();
        return calls.call(id, new GcProtect(id, sessionId, zeroRefused, count, Arrays.copyOfRange(pbns, from, from + count)))
                .thenApply(m -> {
                    int[] refused = ((GcProtected) m).refused();
                    if (refused.length > 0 && refused[refused.length - 1] >= count) {
                        throw new RangeWorkerFailedException("GC worker " + name + " refused entry " + refused[refused.length - 1]
                                + " of a GC_PROTECT of " + count + " PBNs: no such entry; stop using this worker and check its version");
                    }
                    return refused;
                });
    }

    /**
     * Session {@code sessionId} ended: the worker's protection of its blocks stops being tied to it. No
     * answer; nothing if the channel is closed. Sent while the channel is open even after a call timed
     * out (this end is then lost, but the worker keeps the link and its sessions, whose start caps its
     * sweep horizon, until the link ends).
     */
    public void sessionEnd(long sessionId) {
        if (channel.isActive()) {
            channel.writeAndFlush(new GcSessionEnd(sessionId)); // a closed link ends the worker's sessions by itself
        }
    }

    @Override
    protected RangeWorkerLostException lostError(String why) {
        return new RangeWorkerLostException("GC worker " + name + " (PBNs " + range + ") is lost: " + why + "; the grace protection"
                + " it did not answer may not hold, and the sessions it protected blocks for end with its link: run the backup again"
                + " once it registers (see its log for why)");
    }

    /** Takes this worker's GC_PROTECTED and GC_GUARD_FAILED. */
    @Override
    protected boolean answer(Object msg) {
        if (msg instanceof GcProtected p) {
            calls.take(p.requestId(), p).complete(p);
        } else if (msg instanceof GcGuardFailed f) {
            calls.take(f.requestId(), f).completeExceptionally(new RangeWorkerFailedException("GC worker " + name + " (PBNs "
                    + range + ") refused to protect blocks: " + f.message()));
        } else {
            return false;
        }
        return true;
    }
}
