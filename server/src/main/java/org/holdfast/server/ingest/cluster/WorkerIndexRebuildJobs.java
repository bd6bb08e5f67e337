package org.holdfast.server.ingest.cluster;

import java.util.ArrayList;
import java.util.List;
import java.util.SortedMap;
import org.holdfast.server.cluster.RebuildRefusedException;
import org.holdfast.server.cluster.UnknownWorkerException;
import org.holdfast.server.cluster.WorkerRegistry;
import org.holdfast.server.cluster.WorkerView;
import org.holdfast.server.engine.ClusterBroadcast;
import org.holdfast.server.engine.ClusterMode;
import org.holdfast.server.engine.DedupUnavailableException;
import org.holdfast.server.engine.WorkerIndexRebuild;
import org.holdfast.server.gc.GcJobs;
import org.holdfast.server.jobs.Job;
import org.holdfast.server.jobs.JobCancelledException;
import org.holdfast.server.jobs.JobContext;
import org.holdfast.server.jobs.JobResults;
import org.holdfast.server.jobs.JobState;
import org.holdfast.server.jobs.Jobs;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.LocationIndex;

/**
 * Rebuilds a registered worker's dedup index on a master, as a job: the master's location index (the
 * catalog's copy of what the data logs hold) read in PBN order a page at a time, each block's index
 * key taken from the possession column, and handed to a {@link WorkerIndexRebuild} over the workers'
 * links, which teaches the worker what no other worker holds. A block without a possession entry is
 * not taught: its dedup domain is unknown (a backup still running records the entry, then teaches the
 * block itself), and under its bare fingerprint a block of another domain would be shared.
 *
 * <p>Refused while any registered worker is not connected (the target could not learn; another's
 * content would be taught to the target as well, a doubled index), and while a rebuild or a GC job is
 * queued or running. The job runs in the GC's lane ({@link GcJobs#LANE}), so no sweep frees blocks
 * (and no forget reaches the workers) while it reads; a GC job submitted meanwhile waits for it.
 * Backups go on: blocks stored after the start are recorded by their own backups, so the rebuild
 * stops at the PBN the store was about to hand out when it started.
 */
public final class WorkerIndexRebuildJobs {
    /** The jobs' kind, as GET /api/v1/jobs lists them. */
    public static final String KIND = "worker-index-rebuild";
    /** Blocks read per page of the location index, between two safe points of the job. */
    static final int PAGE = 16_384;

    /** Settings: how the master's index works ({@code clusterEngine} false: the workers hold no index of this master). */
    public record Settings(boolean clusterEngine, ClusterMode mode, ClusterBroadcast broadcast, int uSegment) {
    }

    /**
     * What a rebuild did: its figures (as {@link WorkerIndexRebuild.Counts}, blocks read including the
     * unrecorded ones: no possession entry, so not taught) plus the bytes the blocks hold and its time.
     */
    public record Report(long workerId, String nodeName, String mode, long blocksRead, long bytesRead, long taught,
                         long heldByOthers, long alreadyHeld, long unrecorded, double seconds) {
    }

    private final DedupLinks links;
    private final WorkerRegistry registry;
    private final Jobs jobs;
    private final DataStore store;
    private final Settings settings;

    public WorkerIndexRebuildJobs(DedupLinks links, WorkerRegistry registry, Jobs jobs, DataStore store, Settings settings) {
        this.links = links;
        this.registry = registry;
        this.jobs = jobs;
        this.store = store;
        this.settings = settings;
    }

    /**
     * Queues a rebuild of worker {@code workerId}'s index; answers the job.
     *
     * @throws UnknownWorkerException if no such worker is registered
     * @throws RebuildRefusedException if it cannot start now (the message says why and what to do)
     */
    public synchronized Job start(long workerId, String submittedBy) {
        WorkerView target = registered(workerId);
        if (!settings.clusterEngine()) {
            throw new RebuildRefusedException("this master does not use its workers for dedup (holdfast.dedup.engine is not"
                    + " cluster), so there is no worker index to rebuild");
        }
        requireAllConnected(target, links.upByWorkerId());
        for (String kind : List.of(KIND, GcJobs.CYCLE, GcJobs.RECLAIM, GcJobs.COMPACTION, GcJobs.FSCK)) {
            for (JobState state : List.of(JobState.RUNNING, JobState.QUEUED)) {
                List<Job> busy = jobs.list(new Jobs.Query(kind, state, null, 1)).jobs();
                if (!busy.isEmpty()) {
                    long id = busy.get(0).id();
                    throw new RebuildRefusedException("job " + id + " (" + kind + ") is " + state.wireName() + "; a rebuild"
                            + " runs alone with the GC's jobs: wait until it ends (GET /api/v1/jobs/" + id + "), then retry");
                }
            }
        }
        return jobs.submit(KIND, GcJobs.LANE, submittedBy, job -> JobResults.of(run(job, workerId)));
    }

    private WorkerView registered(long workerId) {
        return registry.workers().stream().filter(w -> w.workerId() == workerId).findFirst()
                .orElseThrow(() -> new UnknownWorkerException(workerId));
    }

    /** Every registered worker must be connected: the target to learn, the others to answer what they hold. */
    private void requireAllConnected(WorkerView target, SortedMap<Long, RemoteDedupWorker> up) {
        if (!up.containsKey(target.workerId())) {
            throw new RebuildRefusedException("worker " + target.workerId() + " (" + target.nodeName() + ") is not connected;"
                    + " start it (or its replacement), wait until GET /api/v1/cluster/workers shows it up, then retry");
        }
        for (WorkerView w : registry.workers()) {
            if (!up.containsKey(w.workerId())) {
                throw new RebuildRefusedException("worker " + w.workerId() + " (" + w.nodeName() + ") is not connected: what"
                        + " only it holds would be taught to worker " + target.workerId() + " as well (a doubled index); bring it"
                        + " back; if its host is lost for good, replace it (POST /api/v1/cluster/workers/" + w.workerId()
                        + "/replace, then start the new host) or remove it (DELETE /api/v1/cluster/workers/" + w.workerId()
                        + "); then retry");
            }
        }
    }

    /** The job: the same checks again (it may have waited in the lane), then the store's blocks in PBN order. */
    private Report run(JobContext job, long workerId) {
        long started = System.nanoTime();
        long startedAtMillis = System.currentTimeMillis();
        WorkerView target = registered(workerId);
        SortedMap<Long, RemoteDedupWorker> up = links.upByWorkerId();
        requireAllConnected(target, up);
        List<RemoteDedupWorker> workers = new ArrayList<>(up.values());
        int position = new ArrayList<>(up.keySet()).indexOf(workerId);
        long limit = store.nextPbn(); // later blocks are recorded by the backups that store them
        long[] total = countBelow(store.locations(), limit, PAGE * 4, job);
        job.total(total[0], total[1]);
        job.log("rebuilding the index of worker " + workerId + " (" + target.nodeName() + ") from " + total[0] + " blocks below PBN "
                + limit + ", asking " + (workers.size() - 1) + " other workers (" + modeName() + " mode)");
        long bytes = 0;
        long[] unrecorded = {0};
        WorkerIndexRebuild.Counts c;
        try (WorkerIndexRebuild rebuild = new WorkerIndexRebuild(workers, position, settings.mode(), settings.broadcast(),
                settings.uSegment())) {
            try {
                bytes = teachAll(job, rebuild, limit, unrecorded);
            } catch (JobCancelledException e) {
                try {
                    rebuild.flushTarget(); // what it learnt stays; a new rebuild skips it
                    job.log("cancelled: " + rebuild.counts().taught() + " entries taught so far are kept; a new rebuild skips them");
                } catch (RuntimeException flush) {
                    // cancelled all the same, as asked: what the worker did not keep, a new rebuild teaches again
                    job.log("cancelled, but worker " + workerId + " could not make what it learnt durable: " + what(flush)
                            + "; a new rebuild teaches again what it lost");
                }
                throw e;
            } catch (RuntimeException e) {
                // a worker lost or failing mid-run: keep what the target learnt, if it is still there to flush
                try {
                    rebuild.flushTarget();
                } catch (RuntimeException flush) {
                    e.addSuppressed(flush);
                }
                throw new IllegalStateException("the rebuild of worker " + workerId + " stopped after " + rebuild.counts().blocksRead()
                        + " blocks: " + what(e) + "; once every worker is up again, start the rebuild again (it skips what"
                        + " the worker holds already)", e);
            }
            rebuild.flushTarget();
            c = rebuild.counts();
        }
        links.rebuilt(workerId, startedAtMillis); // a start-over it reported before is answered now
        double seconds = (System.nanoTime() - started) / 1e9;
        long read = c.blocksRead() + unrecorded[0];
        job.log("taught worker " + workerId + " " + c.taught() + " of " + read + " blocks; " + c.heldByOthers()
                + " are held by other workers, " + c.alreadyHeld() + " it held already, " + unrecorded[0]
                + " have no possession entry (not taught: their backups record them)");
        return new Report(workerId, target.nodeName(), modeName(), read, bytes, c.taught(),
                c.heldByOthers(), c.alreadyHeld(), unrecorded[0], Math.round(seconds * 1000) / 1000.0);
    }

    /** What stopped the rebuild: a worker's loss or failure without the advice for backups its message goes on with. */
    private static String what(RuntimeException e) {
        String m = String.valueOf(e.getMessage());
        int advice = m.indexOf("; the backup");
        return e instanceof DedupUnavailableException && advice > 0 ? m.substring(0, advice) : m;
    }

    private String modeName() {
        return settings.mode().name().toLowerCase(java.util.Locale.ROOT);
    }

    /**
     * The blocks below {@code limit} and their stored bytes, for the job's progress: counted
     * {@code page} locations per iterator (none open between pages, as {@link #teachAll} reads them),
     * with a safe point before each page, so a rebuild cancelled while it counts a large store stops
     * at once, having taught nothing.
     */
    static long[] countBelow(LocationIndex locations, long limit, int page, JobContext job) {
        long[] total = new long[2];
        long[] next = {1};
        int[] n = new int[1];
        do {
            job.checkpoint();
            n[0] = 0;
            locations.forEachFrom(next[0], (pbn, logId, offset, storedLength, fps, fpOff) -> {
                if (pbn >= limit) {
                    return false;
                }
                total[0]++;
                total[1] += storedLength;
                next[0] = pbn + 1;
                return ++n[0] < page;
            });
        } while (n[0] == page);
        return total;
    }

    /**
     * Reads the locations below {@code limit} a page at a time (no iterator open between pages) and teaches those
     * with a possession entry, counting the others in {@code unrecorded[0]}; answers the bytes.
     */
    private long teachAll(JobContext job, WorkerIndexRebuild rebuild, long limit, long[] unrecorded) {
        long[] pbns = new long[PAGE];
        byte[] keys = new byte[PAGE * 32];
        boolean[] recorded = new boolean[PAGE];
        long next = 1;
        long bytes = 0;
        while (true) {
            job.checkpoint();
            int[] n = {0};
            long[] pageBytes = {0};
            store.locations().forEachFrom(next, (pbn, logId, offset, storedLength, fps, fpOff) -> {
                if (pbn >= limit) {
                    return false;
                }
                pbns[n[0]] = pbn;
                System.arraycopy(fps, fpOff, keys, n[0] * 32, 32);
                pageBytes[0] += storedLength;
                return ++n[0] < PAGE;
            });
            if (n[0] == 0) {
                return bytes;
            }
            next = pbns[n[0] - 1] + 1;
            // a block of a non-default dedup domain is indexed under its domain key, not its fingerprint
            store.possession().indexKeys(pbns, n[0], keys, recorded);
            for (int i = 0; i < n[0]; i++) {
                if (!recorded[i]) {
                    // its domain is unknown (its backup records it later, with its key): taught under its
                    // fingerprint it would be shared with the default domain; PBN 0 is skipped
                    pbns[i] = 0;
                    unrecorded[0]++;
                }
            }
            rebuild.teach(pbns, keys, n[0]);
            job.advance(n[0], pageBytes[0]);
            bytes += pageBytes[0];
        }
    }
}
