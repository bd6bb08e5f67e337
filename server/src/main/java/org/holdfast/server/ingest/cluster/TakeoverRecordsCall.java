package org.holdfast.server.ingest.cluster;

import io.netty.channel.Channel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.holdfast.common.protocol.SealedLogReport;
import org.holdfast.common.protocol.TakeoverRecords;
import org.holdfast.common.protocol.TakeoverRecordsPart;
import org.holdfast.server.store.SealedLogs;
import org.holdfast.server.store.StoreException;

/**
 * A worker's request for the master's records of its own sealed logs (TAKEOVER_RECORDS, cluster version 7),
 * made by a node that takes the range over from the bucket ({@link WorkerRangeData#checkTakeoversAgainst}):
 * part by part on the link, each waited for on the claiming thread (never the link's event loop, which
 * delivers the parts). A link that ends or a master that does not answer in time fails the takeover; it
 * is tried again at the next registration.
 */
final class TakeoverRecordsCall {
    private final Channel channel;
    private final Duration timeout;
    private final AtomicLong requestIds = new AtomicLong();
    private volatile CompletableFuture<TakeoverRecordsPart> pending;
    private volatile long pendingId;

    TakeoverRecordsCall(Channel channel, Duration timeout) {
        this.channel = channel;
        this.timeout = timeout;
        channel.closeFuture().addListener(f -> {
            CompletableFuture<TakeoverRecordsPart> p = pending;
            if (p != null) {
                p.completeExceptionally(new IllegalStateException("the link to the master ended"));
            }
        });
    }

    /** Takes the master's TAKEOVER_RECORDS_PART (on the event loop); one naming no pending request is ignored. */
    void answer(TakeoverRecordsPart part) {
        CompletableFuture<TakeoverRecordsPart> p = pending;
        if (p != null && part.requestId() == pendingId) {
            p.complete(part);
        }
    }

    /** The master's records of worker {@code worker}'s sealed logs, {@link SealedLogs#NONE} if it holds none. */
    SealedLogs fetch(long worker) {
        if (channel.eventLoop().inEventLoop()) {
            throw new IllegalStateException("the master's records are asked for on the link's event loop, which delivers them");
        }
        List<SealedLogs.Sealed> out = new ArrayList<>();
        int after = 0;
        while (true) {
            TakeoverRecordsPart part = ask(after);
            if (part.status() == TakeoverRecordsPart.NONE) {
                return SealedLogs.NONE;
            }
            if (part.status() == TakeoverRecordsPart.FAILED) {
                throw refused("the master could not read its records of the worker's sealed logs: " + part.message());
            }
            for (SealedLogReport.Sealed l : part.sealed()) {
                if (l.logId() <= after) {
                    throw refused("the master's records came out of order (log id " + l.logId() + " after " + after + ")");
                }
                out.add(SealedLogs.Sealed.of(worker, l));
                after = l.logId();
            }
            if (!part.more()) {
                return new SealedLogs(out, part.complete());
            }
            if (part.sealed().isEmpty()) {
                throw refused("the master said more records follow but sent none");
            }
        }
    }

    private TakeoverRecordsPart ask(int after) {
        CompletableFuture<TakeoverRecordsPart> p = new CompletableFuture<>();
        long id = requestIds.incrementAndGet();
        pendingId = id;
        pending = p;
        try {
            if (!channel.isActive()) {
                throw refused("the link to the master is down");
            }
            channel.writeAndFlush(new TakeoverRecords(id, after));
            return p.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw refused("the master did not answer TAKEOVER_RECORDS within " + timeout.toMillis() + " ms");
        } catch (ExecutionException e) {
            throw refused(e.getCause().getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw refused("interrupted");
        } finally {
            pending = null;
        }
    }

    private static StoreException refused(String why) {
        return new StoreException("range-takeover", null, null, "the takeover of the worker's range needs the master's records of the"
                + " worker's sealed logs to check each log it adopts, and did not get them (" + why + "): it claimed nothing new and"
                + " wrote nothing in the bucket; it is tried again when this worker registers again", null);
    }
}
