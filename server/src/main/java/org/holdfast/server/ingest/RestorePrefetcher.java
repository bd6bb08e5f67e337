package org.holdfast.server.ingest;

import java.lang.System.Logger.Level;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.MapCursor;
import org.holdfast.server.store.ReadAhead;

/**
 * Announces a restore's PBNs to the store's {@link ReadAhead} from a thread of its own: a second scan
 * of the snapshot's map runs ahead of the {@link RestoreStream}, which reports how far it got
 * ({@link #reached}). Only an optimisation: if planning fails, the restore goes on reading on demand.
 */
final class RestorePrefetcher implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(RestorePrefetcher.class.getName());
    /** Mapped LBNs handed to the planner at a time. */
    private static final int BATCH = 1024;

    private final ReadAhead ahead;
    private final Thread planner;
    private volatile boolean closed;

    private RestorePrefetcher(ReadAhead ahead, Catalog catalog, long volumeId, long sequence, long fromLbn, long endLbn) {
        this.ahead = ahead;
        this.planner = new Thread(() -> plan(catalog, volumeId, sequence, fromLbn, endLbn), "holdfast-restore-ahead");
        planner.setDaemon(true);
    }

    /** Starts reading ahead for the restore of {@code sequence} of volume {@code volumeId} from {@code fromLbn}, or null if the store has no read-ahead. */
    static RestorePrefetcher start(ReadAhead ahead, Catalog catalog, long volumeId, long sequence, long fromLbn, long endLbn) {
        if (ahead == null) {
            return null;
        }
        RestorePrefetcher p = new RestorePrefetcher(ahead, catalog, volumeId, sequence, fromLbn, endLbn);
        p.planner.start();
        return p;
    }

    private void plan(Catalog catalog, long volumeId, long sequence, long fromLbn, long endLbn) {
        long[] lbns = new long[BATCH];
        long[] pbns = new long[BATCH];
        // the cursor is opened, used and closed on this thread only (it is not thread-safe)
        try (MapCursor cursor = catalog.mapCursor(volumeId)) {
            cursor.startScan(sequence, fromLbn, endLbn);
            boolean more = true;
            while (more && !closed) {
                int n = 0;
                while (n < BATCH && (more = cursor.nextMapped())) {
                    if (cursor.pbn() != 0) {
                        lbns[n] = cursor.lbn();
                        pbns[n] = cursor.pbn();
                        n++;
                    }
                }
                ahead.plan(pbns, lbns, n);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // closed
        } catch (RuntimeException e) {
            if (!closed) {
                LOG.log(Level.WARNING, "restore read-ahead stopped, the restore reads on demand: " + e.getMessage());
            }
        }
    }

    /** The restore has sent every LBN before {@code lbn}. */
    void reached(long lbn) {
        ahead.reached(lbn);
    }

    /** Stops the planner and waits for it to release its cursor. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        ahead.close();
        planner.interrupt();
        try {
            planner.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
