package org.holdfast.server.app;

import java.time.Clock;
import org.holdfast.server.catalog.JobStore;
import org.holdfast.server.gc.ClusterCountsCheck;
import org.holdfast.server.gc.GcJobs;
import org.holdfast.server.gc.GcService;
import org.holdfast.server.jobs.Jobs;
import org.holdfast.server.store.MetadataDb;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;

/**
 * Wires the job runner: its history in the catalog ({@link JobStore}, the newest {@link Jobs#HISTORY}
 * jobs), the runner, and the GC's jobs. The runner stops (cancelling what runs, at a safe point)
 * before the GC service and the metadata database close.
 */
@Configuration(proxyBeanMethods = false)
@Conditional(OnStandaloneOrMaster.class)
public class JobsConfiguration {

    @Bean
    JobStore jobStore(MetadataDb db, Clock holdfastClock) {
        return new JobStore(db, Jobs.HISTORY, holdfastClock);
    }

    /** {@code gc} is only a dependency: the runner must close before it (its jobs use it). */
    @Bean(destroyMethod = "close")
    Jobs jobs(JobStore store, Clock holdfastClock, GcService gc) {
        return new Jobs(store, holdfastClock);
    }

    @Bean
    GcJobs gcJobs(GcService gc, Jobs jobs, ClusterDataMode dataMode, ObjectProvider<ClusterCountsCheck> workerCounts) {
        // blocks on workers: fsck checks the workers' GC counts (the master's own GMA counts none of their PBNs)
        return new GcJobs(gc, jobs, dataMode == ClusterDataMode.WORKERS ? workerCounts.getObject() : null);
    }
}
