package org.holdfast.server.gc;

import java.nio.file.Path;
import java.time.Clock;
import java.util.List;
import java.util.stream.Collectors;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.GcDelta;
import org.holdfast.gc.gma.GmaFormat;
import org.holdfast.gc.gma.GmaLayout;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.ClusterStore;
import org.holdfast.server.catalog.GcOutbox;
import org.holdfast.server.cluster.WorkerRecord;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.FormatVersions;

/**
 * Exports one worker's GC counts from a stopped master's catalog ({@code holdfast.cluster.data=workers})
 * to a {@link WorkerCountsFile}, for a worker whose {@code range-data/gc} was lost: per PBN of the
 * worker's range (its membership record) the RC, ET and pins by {@link CatalogCounts}, the rule of
 * {@link GcMetadataRebuild}, and the worker's delta mark.
 *
 * <h2>The mark</h2>
 * A GC delta's id is its operation's id × 2^20 + its part ({@link GcDelta#deltaId}), and an
 * operation's effect on the catalog is durable in the same batch as its id ({@code OperationLog}).
 * With the master stopped the catalog holds every operation below its counter
 * ({@code gc.next-op-id}), including those a crash left to the next start's re-drive, which will
 * put their deltas into the outbox then. So the counts include every delta of every operation
 * below the counter and none of a later one: the mark is the highest delta id an operation below
 * the counter can have ((counter − 1) × 2^20 + 2^20 − 1), at least the outbox's highest entry for
 * the worker. The worker answers every delta at or below it as a replay (it is in the counts) and
 * logs every later one.
 *
 * <h2>The routed mark</h2>
 * The counts file also says which of those deltas the master routed to this worker: its routed
 * mark ({@link GcOutbox#routedMark}, the highest delta id routed to it, durable in the same batch as
 * the outbox entry), and how many outbox entries were still unacknowledged. {@code worker-fsck}
 * compares counts whenever the worker's log mark lies between the routed mark and the file's mark.
 * That needs every operation the catalog holds to be routed already: an operation a crash (or a
 * paused GC) left to the next start's re-drive is in the counts, but its deltas are in no outbox yet.
 * So the routed mark is written only if the master's GC last closed with every operation routed
 * ({@code gc.routed-through}, written at a clean close, equals the counter − 1) and the catalog has a
 * routed mark for the worker; otherwise it is unknown (then only equal marks are compared).
 *
 * <p>Why offline: on a running master a commit and its outbox entries are separate batches, so
 * counts read from a live catalog and a mark read beside them could miss or double an operation,
 * and a doubled release frees a block a snapshot still references.
 */
public final class WorkerGcExport {
    private final Catalog catalog;
    private final int passChunks;
    private final Clock clock;
    private final GcMetadataRebuild.Progress progress;

    /** What an export wrote. */
    public record Report(long workerId, String nodeName, PbnRange range, long mark, long records, long pinnedPbns,
                         int volumes, int snapshots, long mapEntries, int passes, long bytes, long millis, Routed routed) {
    }

    /**
     * What the file says about the deltas routed to the worker.
     *
     * @param mark          the highest delta id routed to the worker, or {@link WorkerCountsFile#UNKNOWN}
     * @param outboxEntries the worker's unacknowledged outbox entries at the export
     * @param unknownWhy    why the mark is unknown (null when it is known)
     */
    public record Routed(long mark, long outboxEntries, String unknownWhy) {
    }

    /** The routed mark and outbox entries the file gets for worker {@code workerId} (see the class comment). */
    public static Routed routedOf(Catalog catalog, long workerId) {
        GcOutbox outbox = new GcOutbox(catalog.db());
        long entries = outbox.count(workerId);
        long lastOp = catalog.db().metaLong(GcRecords.NEXT_OP_ID, 1) - 1;
        long routedThrough = catalog.db().metaLong(GcRecords.ROUTED_THROUGH, -1);
        if (routedThrough < 0 && lastOp > 0 && new WorkerCountsFences(catalog.db()).of(workerId) != null) {
            // catalog-restore dropped the routed marks and fenced the worker: this export is the recovery's, not a stale one
            return new Routed(WorkerCountsFile.UNKNOWN, entries, "this catalog was restored (catalog-restore drops the routed marks)"
                    + " and worker " + workerId + " is fenced until it imports counts from it: go on with worker-gc-import, which"
                    + " needs no routed mark");
        }
        if (lastOp > 0 && routedThrough != lastOp) {
            return new Routed(WorkerCountsFile.UNKNOWN, entries, "the master's GC did not last stop with every operation routed"
                    + " (a crash, or GC paused; " + (routedThrough < 0 ? "no operation recorded as routed" : "routed through operation "
                    + routedThrough) + " of " + lastOp + "): start the master, let its GC resume, stop it, export again");
        }
        java.util.OptionalLong mark;
        try {
            mark = outbox.routedMark(workerId);
        } catch (CorruptDataException e) {
            return new Routed(WorkerCountsFile.UNKNOWN, entries, e.getMessage());
        }
        if (mark.isEmpty()) {
            return new Routed(WorkerCountsFile.UNKNOWN, entries, "the master's catalog records no delta routed to this worker"
                    + " (none since this release keeps routed marks)");
        }
        return new Routed(mark.getAsLong(), entries, null);
    }

    /**
     * @param catalog    the catalog of a stopped master (the caller holds its data directory's lock)
     * @param passChunks GMA chunks (8191 PBNs each) counted per pass over the catalog
     */
    public WorkerGcExport(Catalog catalog, int passChunks, Clock clock, GcMetadataRebuild.Progress progress) {
        this.catalog = catalog;
        this.passChunks = passChunks;
        this.clock = clock;
        this.progress = progress;
    }

    /**
     * The mark of an export from a catalog that has run no GC operation yet: never 0, which a worker's
     * import record reads as "imported no counts" (so a counts fence set before the first operation would
     * stay until the next export after one). Below every delta id an operation has (operation ids start at 1).
     */
    public static final long FIRST_MARK = 1;

    /**
     * The highest GC delta id an operation the catalog holds may have routed to worker {@code workerId}
     * (see the class comment); {@link #FIRST_MARK} if it holds none.
     */
    public static long markOf(Catalog catalog, long workerId) {
        return Math.max(markByCounter(catalog.db().metaLong(GcRecords.NEXT_OP_ID, 1)), new GcOutbox(catalog.db()).lastDeltaId(workerId));
    }

    /** The mark an export gives from a catalog whose next GC operation id is {@code nextOpId}, by the counter alone. */
    public static long markByCounter(long nextOpId) {
        return nextOpId > 1 ? GcDelta.deltaId(nextOpId - 1, GcDelta.MAX_PART) : FIRST_MARK;
    }

    /**
     * Counts worker {@code workerId}'s range and writes {@code out} (through {@code out.partial}, moved in once on disk).
     *
     * @throws IllegalStateException the master does not keep its blocks on workers, or has no worker {@code workerId}; nothing written
     */
    public Report run(long workerId, Path out) {
        long started = System.nanoTime();
        if (catalog.db().metaLong(FormatVersions.META_CLUSTER_DATA_MODE, 0) != FormatVersions.CLUSTER_DATA_ON_WORKERS) {
            throw new IllegalStateException("this data directory is not a master with holdfast.cluster.data=workers: its workers"
                    + " keep no GC metadata of their own; nothing was written (for a server's own GC metadata run gc-rebuild without"
                    + " --worker)");
        }
        List<WorkerRecord> workers = new ClusterStore(catalog.db()).workers();
        WorkerRecord w = workers.stream().filter(r -> r.workerId() == workerId).findFirst().orElseThrow(() ->
                new IllegalStateException("this master has no worker " + workerId + " (its workers: " + (workers.isEmpty() ? "none"
                        : workers.stream().map(r -> r.workerId() + " '" + r.nodeName() + "'").collect(Collectors.joining(", ")))
                        + "); nothing was written"));
        PbnRange range = w.range();
        GmaLayout layout = new GmaLayout(range);
        long mark = markOf(catalog, workerId);
        Routed routed = routedOf(catalog, workerId);
        CatalogCounts counts = new CatalogCounts(catalog, layout, progress);
        long passPbns = (long) passChunks * GmaFormat.PBNS_PER_CHUNK;
        long limit = layout.base() + 1; // one past the highest PBN seen, known after the first pass
        int passes = 0;
        long referenced = 0;
        long pinned = 0;
        long mapEntries = 0;
        long bytes;
        try (WorkerCountsFile.Writer file = new WorkerCountsFile.Writer(out,
                new WorkerCountsFile.Header(workerId, range, mark, clock.millis(), routed.mark(), routed.outboxEntries()))) {
            for (long lo = layout.base(); lo < limit; lo += passPbns) {
                passes++;
                long passStarted = System.nanoTime();
                CatalogCounts.Pass p = new CatalogCounts.Pass(lo, (int) passPbns);
                limit = Math.max(limit, counts.scan(p));
                mapEntries = counts.mapEntries();
                for (int s = 0; s < p.flags.length; s++) {
                    if ((p.flags[s] & CatalogCounts.REFERENCED) == 0) {
                        continue;
                    }
                    file.add(p.lo + s, p.rc[s], p.pins[s], p.et[s]);
                    referenced++;
                    if (p.pins[s] > 0) {
                        pinned++;
                    }
                }
                progress.step(rateLine(passes, lo, limit, passPbns, System.nanoTime() - passStarted, System.nanoTime() - started,
                        file.records()));
            }
            bytes = file.finish();
        }
        long millis = (System.nanoTime() - started) / 1_000_000;
        return new Report(workerId, w.nodeName(), range, mark, referenced, pinned, counts.volumes(), counts.snapshots(),
                mapEntries, passes, bytes, millis, routed);
    }

    /** "pass k/K: PBNs a..b, R records so far, N PBNs/s, ETA S s": the total is known once the first pass saw the highest PBN. */
    private static String rateLine(int pass, long lo, long limit, long passPbns, long passNanos, long totalNanos, long records) {
        long total = Math.max(pass, (limit - (lo - (pass - 1) * passPbns) + passPbns - 1) / passPbns);
        double perSecond = passPbns / Math.max(1e-9, passNanos / 1e9);
        long etaSeconds = Math.round((total - pass) * (totalNanos / 1e9 / pass));
        return String.format(java.util.Locale.ROOT, "pass %d/%d: PBNs %d..%d, %d records so far, %.0f PBNs/s, ETA %d s",
                pass, total, lo, lo + passPbns - 1, records, perSecond, etaSeconds);
    }
}
