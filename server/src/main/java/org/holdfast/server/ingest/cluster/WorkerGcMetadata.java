package org.holdfast.server.ingest.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.function.ToLongFunction;
import java.time.Clock;
import java.time.Duration;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.GcDelta;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.gc.bosc.BoscSettings;
import org.holdfast.gc.bosc.UpdateBatch;
import org.holdfast.gc.gma.GmaFormat;
import org.holdfast.gc.sweep.GraceGuard;

/**
 * A worker's GC metadata of its PBN range (distributed GC, thesis 7.2.4): the GMA and BOSC log
 * ({@link BoscPipeline} over the range the master assigned) in {@code <data-dir>/range-data/gc},
 * beside the range store ({@link WorkerRangeData}), into which it logs the GC deltas the master
 * routes to it. Opened at the first registration that needs it and kept across reconnections over
 * the same range; a directory created for another range is refused by the GMA (its
 * {@code gma.range}), and that refusal is what every delta then hears. The worker process owns it
 * and closes it after its links.
 *
 * <p>Once only: part {@code p} of master operation {@code o} is logged as one BOSC group numbered
 * {@link GcDelta#deltaId} (o * 2^20 + p, increasing in both), so the log's last group id is the
 * worker's mark: a delta at or below it is a replay (the master sends again what it has no
 * acknowledgement for after a reconnect) and changes nothing. Every delta is synced before
 * {@link #log} returns, and deltas are logged one at a time under this object's lock, so the mark
 * it returns is always durable: after a crash, recovery finds at least every acknowledged delta.
 *
 * <p>The worker decides what of its range may be freed, so the grace protection of the blocks that
 * backups in progress write or match lives here too: a {@link GraceGuard} over the same pipeline,
 * made with it at {@link #claim} (its stripes are the ones the range's sweep takes). Every block
 * stored for a DATA_STORE gets a grace expiry of its own, and the stores answered but not yet
 * protected by the master cap the sweep ({@link AnsweredStores}).
 *
 * <p>Counts lost: GC metadata created afresh over a range store that already holds blocks (its
 * directory lost or removed while the range data stayed) lacks every count from before, and the
 * master resends only what it has no acknowledgement for, so a sweep would free blocks older
 * snapshots reference. {@link #claim} then writes {@value #COUNTS_LOST} beside the GMA, and
 * {@link #countsLost} keeps every sweep of this worker refused while that file exists; the offline
 * {@link WorkerGcImport} of counts the stopped master exported replaces the directory, file and all.
 */
public final class WorkerGcMetadata implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(WorkerGcMetadata.class.getName());
    /** As the standalone GC's: covers a lookup already in flight when the sweep freed the block. */
    private static final Duration TOMBSTONE_LINGER = Duration.ofMinutes(10);

    /** The file that marks GC metadata created over a range store that already held blocks (see the class comment). */
    public static final String COUNTS_LOST = "counts-lost";

    private final Path dir;
    private final BoscSettings settings;
    private final Duration grace;
    private final Clock clock;
    private BoscPipeline pipeline;
    private GraceGuard guard;
    private PbnRange range;
    private RuntimeException refusal;
    private boolean closed;
    private ToLongFunction<PbnRange> storedBlocks; // PBNs the range store over a range has handed out; null: unknown
    private final AcknowledgedDeltaMark acknowledged;
    private final AnsweredStores answered;

    /** GC metadata in {@code dir} ({@code <data-dir>/range-data/gc}), with {@code settings} and the default grace of 24 h. */
    public WorkerGcMetadata(Path dir, BoscSettings settings) {
        this(dir, settings, Duration.ofHours(24), Clock.systemUTC());
    }

    /** GC metadata in {@code dir}, whose guard protects a backup's blocks for {@code grace} ({@code holdfast.gc.grace}). */
    public WorkerGcMetadata(Path dir, BoscSettings settings, Duration grace, Clock clock) {
        this.dir = dir;
        this.settings = settings;
        this.grace = grace;
        this.clock = clock;
        this.acknowledged = new AcknowledgedDeltaMark(dir);
        this.answered = new AnsweredStores(clock, grace);
    }

    /** The DATA_STOREs answered over the live links and not yet protected by the master, which cap the range's sweep. */
    public AnsweredStores answered() {
        return answered;
    }

    /** Its directory. */
    public Path dir() {
        return dir;
    }

    /** The worker's clock, which its guard and its range sweep trust (not the master's). */
    public Clock clock() {
        return clock;
    }

    /**
     * The GC metadata over {@code r}: opened now (recovering its log after a crash) unless it is open
     * over {@code r} already (open over another range: closed first).
     *
     * @throws RuntimeException the GMA's refusal (a directory recorded for another range, say), also for later calls over {@code r}
     */
    public synchronized BoscPipeline claim(PbnRange r) {
        if (closed) {
            throw new IllegalStateException("the worker's GC metadata in " + dir + " is closed: the worker is stopping");
        }
        if (r.equals(range)) {
            if (refusal != null) {
                throw refusal;
            }
            return pipeline;
        }
        closePipeline();
        range = r;
        try {
            if (!Files.exists(dir.resolve(GmaFormat.RANGE_FILE))) {
                // before the open creates the GMA: once gma.range exists this is never checked again, so a crash
                // or a failed marker write between the two would leave lost counts unmarked and the range swept
                checkHistory(r);
            }
            pipeline = BoscPipeline.open(dir, settings, r);
            guard = new GraceGuard(pipeline, clock, grace, TOMBSTONE_LINGER);
            return pipeline;
        } catch (RuntimeException e) {
            refusal = e;
            throw e;
        }
    }

    /**
     * Logs {@code d} over range {@code r} once and syncs the log; returns the worker's mark, the delta
     * id of the highest delta durably logged (at least {@code d}'s). A replay logs nothing.
     *
     * @throws IllegalArgumentException an update of a PBN outside {@code r}: nothing logged
     */
    public synchronized long log(GcDelta d, PbnRange r) {
        BoscPipeline p = claim(r);
        long id = d.deltaId();
        if (id <= p.lastOpId()) {
            return p.lastOpId(); // logged and synced before it was acknowledged the first time
        }
        UpdateBatch b = new UpdateBatch(d.count());
        for (int i = 0; i < d.count(); i++) {
            if (!r.contains(d.pbns()[i])) {
                throw new IllegalArgumentException("update " + i + " of GC operation " + d.opId() + " (part " + d.part() + ") is for PBN "
                        + d.pbns()[i] + ", outside this worker's range " + r + "; nothing of it was logged (the master routed it to the"
                        + " wrong worker: check the cluster membership)");
            }
            b.add(d.kinds()[i], d.pbns()[i], d.values()[i]);
        }
        try {
            p.appendGroup(id, b);
            p.awaitDurable();
            acknowledged.record(p.lastOpId()); // outside gc/: a stale counts file is refused even once gc/ is lost again
        } catch (RuntimeException e) {
            // the log may now name a delta that is not durable: answering a resend of it as a replay
            // would acknowledge what a crash can lose, so nothing more is answered until a reopen recovers
            refusal = new IllegalStateException("the GC metadata in " + dir + " failed while logging GC operation " + d.opId() + " (part "
                    + d.part() + "): " + e.getMessage() + "; no GC delta is logged or acknowledged until the worker restarts (its log"
                    + " is recovered then)", e);
            throw refusal;
        }
        return p.lastOpId();
    }

    /** With {@code storedBlocks} (the PBNs the range store over a range has handed out), GC metadata created afresh is checked against it. */
    public synchronized void checkHistoryAgainst(ToLongFunction<PbnRange> storedBlocks) {
        this.storedBlocks = storedBlocks;
    }

    /** GC metadata just created over {@code r}: if the range store already holds blocks, their counts are lost; mark it. */
    private void checkHistory(PbnRange r) {
        if (storedBlocks == null) {
            return;
        }
        String why;
        try {
            long n = storedBlocks.applyAsLong(r);
            if (n <= 0) {
                return;
            }
            why = "the range store beside it had handed out " + n + " PBNs";
        } catch (RuntimeException e) {
            why = "the range store beside it could not be read (" + e.getMessage() + "), so it may hold blocks";
        }
        String text = "GC metadata created " + java.time.Instant.now() + " over PBNs " + r + " while " + why + ": every reference count"
                + " from before is lost, so this worker's range is never swept until this file is gone: rebuild range-data/gc from the"
                + " master's catalog (worker stopped: gc-rebuild --worker N on the stopped master, then worker-gc-import here;"
                + " docs/operations.md), or restore it from a copy taken with its range data and remove this file\n";
        try {
            Files.createDirectories(dir);
            Files.writeString(dir.resolve(COUNTS_LOST), text, StandardCharsets.UTF_8);
            try (FileChannel f = FileChannel.open(dir.resolve(COUNTS_LOST), StandardOpenOption.WRITE)) {
                f.force(true); // durable before the GMA is created: a power loss must not keep the GMA and lose the mark
            }
            try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
                d.force(true); // and its directory entry
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + dir.resolve(COUNTS_LOST) + ": " + e.getMessage(), e);
        }
        LOG.log(System.Logger.Level.ERROR, "the GC metadata in " + dir + " was created anew over PBNs " + r + " while " + why
                + ": the reference counts from before are lost (was range-data/gc removed, or its disk replaced?). This worker"
                + " keeps storing, serving and protecting blocks, but refuses every sweep of its range (nothing is freed here) until"
                + " " + dir.resolve(COUNTS_LOST) + " is gone: stop this worker and the master, run holdfast-server gc-rebuild --worker N"
                + " --out FILE on the master and holdfast-server worker-gc-import --file FILE on this worker (docs/operations.md),"
                + " or restore range-data/gc from a copy taken together with range-data/data and remove the file");
    }

    /** True while {@value #COUNTS_LOST} marks this GC metadata as missing counts from before it was created: no sweep may free anything. */
    public boolean countsLost() {
        return Files.exists(dir.resolve(COUNTS_LOST));
    }

    /** The grace guard of the GC metadata open now (see the class comment), or null. */
    public synchronized GraceGuard guard() {
        return guard;
    }

    /** The GC metadata open now, or null. */
    public synchronized BoscPipeline pipeline() {
        return pipeline;
    }

    /** Simulates a killed worker (tests): the log is not synced nor checkpointed, the GMA not written; reopen recovers. */
    synchronized void abandon() {
        if (pipeline != null) {
            pipeline.abandon();
            pipeline = null;
        }
        guard = null;
        range = null;
        refusal = null;
    }

    private void closePipeline() {
        if (pipeline != null) {
            pipeline.close();
            pipeline = null;
        }
        guard = null;
        range = null;
        refusal = null;
    }

    @Override
    public synchronized void close() {
        closed = true;
        closePipeline();
    }
}
