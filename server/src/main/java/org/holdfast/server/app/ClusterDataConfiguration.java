package org.holdfast.server.app;

import org.holdfast.common.id.PbnRange;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.SnapshotCommit;
import org.holdfast.server.catalog.ReferenceGuard;
import org.holdfast.server.catalog.SealedLogStore;
import org.holdfast.server.catalog.GcOutbox;
import org.holdfast.server.cluster.WorkerRegistry;
import org.holdfast.server.ingest.cluster.ClusterServer;
import org.holdfast.server.ingest.cluster.FreedBadMarks;
import org.holdfast.server.ingest.cluster.GcDeltaLinks;
import org.holdfast.server.ingest.cluster.GcDeltaSenders;
import org.holdfast.server.ingest.cluster.RangeCopies;
import org.holdfast.server.ingest.cluster.MasterCountsLinks;
import org.holdfast.server.ingest.cluster.RangeReferenceGuard;
import org.holdfast.server.ingest.cluster.WorkerBlockHome;
import org.holdfast.server.ingest.cluster.WorkerSweeps;
import org.holdfast.server.cluster.WorkerView;
import org.holdfast.server.gc.WorkerCountsFences;
import org.holdfast.server.gc.ClusterCountsCheck;
import org.holdfast.server.gc.GcService;
import java.time.Duration;
import org.holdfast.server.store.BlockHome;
import org.holdfast.server.store.DataDirectory;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.LocalBlockHome;
import org.holdfast.server.store.MetadataDb;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * Wires {@code holdfast.cluster.data} (see {@link ClusterDataMode}): settled against the store before
 * the ingest opens; with {@code workers}, the master's sessions and restores keep their blocks in
 * the workers' range stores ({@link WorkerBlockHome} over the cluster port's registered links).
 */
@Configuration(proxyBeanMethods = false)
@Conditional(OnStandaloneOrMaster.class)
public class ClusterDataConfiguration {
    private static final Logger LOG = LoggerFactory.getLogger(ClusterDataConfiguration.class);

    /** The data mode, checked and (for a new store) recorded before the ingest opens (a worker node has none: its data is its range's). */
    @Bean
    ClusterDataMode clusterDataMode(HoldfastProperties props, GcBookkeepingMode gc, MetadataDb db,
                                    @Value("${holdfast.dedup.engine:sungem}") String dedupEngine) {
        // gc is only a dependency: bookkeeping is settled (or refused) first
        ClusterDataMode mode = ClusterDataMode.settle(ClusterDataMode.parse(props.cluster().data()), props.cluster().clusterRole(),
                dedupEngine, db);
        if (mode == ClusterDataMode.WORKERS) {
            LOG.warn("holdfast.cluster.data=workers (experimental): backups keep their blocks on the workers, and each worker sweeps"
                    + " its own range on the master's GC cycle; verify and the image API read them from their workers; the online fsck"
                    + " (POST /api/v1/gc/fsck) checks the workers' GC counts; the offline fsck, reclaim-now and catalog backups do not"
                    + " reach them yet, and a lost worker's blocks are unavailable until it comes back (unless this master's holdfast.store.s3.*"
                    + " names the workers' bucket: then they are read from it)");
        }
        return mode;
    }

    /**
     * Where blocks live, by the settled mode (not the raw property, which {@link ClusterDataMode#parse}
     * reads more leniently: " workers" would record workers and still store on the master): with
     * {@code workers} the registered workers' range stores, else the master's data store.
     */
    @Bean
    BlockHome blockHome(ClusterDataMode mode, DataStore store, ObjectProvider<ClusterServer> server, ObjectProvider<RangeCopies> copies) {
        return mode == ClusterDataMode.WORKERS ? new WorkerBlockHome(server.getObject().rangeStores(), copies.getIfAvailable(), store.badBlocks())
                : new LocalBlockHome(store);
    }

    /**
     * A master's read-only copies of lost workers' ranges, made from the bucket its own
     * {@code holdfast.store.s3.*} settings name (one setting per concept: the workers' bucket and
     * prefix); with backend local none is made, and a lost worker's blocks stay unavailable. Read
     * only with {@code workers}; any copies a previous run left in {@code <data-dir>/worker-ranges}
     * are deleted at start.
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnProperty(name = "holdfast.cluster.role", havingValue = "master")
    RangeCopies rangeCopies(ClusterServer server, WorkerRegistry registry, HoldfastProperties props, DataDirectory dir, DataStore store,
                            MetadataDb db) {
        return new RangeCopies(server.rangeStores(), registry::workers, ClusterConfiguration.readingArchive(props),
                dir.subdirectory(RangeCopies.DIRECTORY), store.reserve(), registry.settings().lostAfter(), System::nanoTime,
                new SealedLogStore(db)::forWorker);
    }

    /**
     * The online check of the workers' GC counts (fsck on a master with {@code workers}): windows of 128 GMA
     * chunks (about a million PBNs, 17 MiB of counts), each one pass over the catalog's maps under the
     * commit monitor; a hold over 30 s is logged; a worker whose outbox does not drain within a minute
     * is reported not checked.
     */
    @Bean
    @ConditionalOnProperty(name = "holdfast.cluster.role", havingValue = "master")
    ClusterCountsCheck clusterCountsCheck(Catalog catalog, GcService gc, ObjectProvider<SnapshotCommit> commits, ClusterServer server,
                                          GcDeltaSenders senders) {
        return new ClusterCountsCheck(catalog, gc, commits::getObject, new MasterCountsLinks(server, senders),
                ClusterCountsCheck.MAX_WINDOW_PBNS, Duration.ofMinutes(1), Duration.ofSeconds(30));
    }

    /** With {@code workers}: reclaim-now and removing a worker answer 409 before they touch the master's own range. */
    @Bean
    WebMvcConfigurer dataOnWorkersEndpoints(ClusterDataMode mode) {
        return new WebMvcConfigurer() {
            @Override
            public void addInterceptors(InterceptorRegistry registry) {
                if (mode == ClusterDataMode.WORKERS) {
                    registry.addInterceptor(RefusedEndpoints.dataOnWorkers());
                }
            }
        };
    }

    /**
     * A master's carriers of distributed GC (one sender per worker, from the outbox in the catalog's
     * {@code gc-outbox}); the GC routes through them only with {@code workers} ({@code GcConfiguration}),
     * and starts them once its re-drive is done. Closed before the catalog (it depends on it).
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnProperty(name = "holdfast.cluster.role", havingValue = "master")
    GcDeltaSenders gcDeltaSenders(WorkerRegistry registry, GcDeltaLinks links, MetadataDb db) {
        return new GcDeltaSenders(new PbnRange(1, registry.settings().firstPbn()), registry::workers, links, new GcOutbox(db));
    }

    /** How long a GC cycle waits for its workers' sweeps (each runs on, and logs its result, if it takes longer). */
    static final Duration WORKER_SWEEP_WAIT = Duration.ofMinutes(30);

    /**
     * A master's round of worker sweeps; with {@code workers} and GC bookkeeping on, every GC cycle
     * asks it after its own sweep (each worker whose outbox is drained sweeps its range), holding back
     * the workers the ingest's {@link RangeReferenceGuard} names (with {@code workers} and bookkeeping
     * on it is the guard; otherwise no cycle asks this round).
     */
    @Bean
    @ConditionalOnProperty(name = "holdfast.cluster.role", havingValue = "master")
    WorkerSweeps workerSweeps(ClusterDataMode mode, GcBookkeepingMode bookkeeping, GcService gc, ClusterServer server,
                              WorkerRegistry registry, GcDeltaSenders senders, ReferenceGuard guard, MetadataDb db, DataStore store,
                              Catalog catalog) {
        // a worker is not swept while a backup protected blocks on it over a link that has ended since
        WorkerSweeps.SessionHolds holds = guard instanceof RangeReferenceGuard r ? r::heldByEndedLinks : WorkerSweeps.SessionHolds.NONE;
        if (mode == ClusterDataMode.WORKERS && bookkeeping == GcBookkeepingMode.ON && !(guard instanceof RangeReferenceGuard)) {
            // without the hold a worker could be swept under a backup whose protection ended with a link
            throw new IllegalStateException("data=workers with GC bookkeeping on needs the range reference guard, got " + guard);
        }
        WorkerSweeps sweeps = new WorkerSweeps(server.rangeSweeps(),
                () -> registry.workers().stream().map(WorkerView::workerId).toList(), senders::pending, holds,
                new WorkerCountsFences(db)::sweepRefusal, WORKER_SWEEP_WAIT, Duration.ofMinutes(1));
        if (mode == ClusterDataMode.WORKERS && bookkeeping == GcBookkeepingMode.ON) {
            // the master's bad marks of blocks a swept worker freed go after the round (a standalone GC's forget clears its own)
            gc.sweepOwnersWith(new FreedBadMarks(sweeps, server.rangeStores(), store.badBlocks(), catalog));
        }
        return sweeps;
    }
}
