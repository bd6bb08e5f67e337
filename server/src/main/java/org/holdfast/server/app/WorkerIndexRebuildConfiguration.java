package org.holdfast.server.app;

import org.holdfast.server.cluster.WorkerRegistry;
import org.holdfast.server.ingest.cluster.DedupLinks;
import org.holdfast.server.ingest.cluster.WorkerIndexRebuildJobs;
import org.holdfast.server.jobs.Jobs;
import org.holdfast.server.store.DataStore;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * On a master: rebuilding a worker's dedup index from the store as a job
 * ({@code POST /api/v1/cluster/workers/{id}/rebuild}), over the workers' links, the job runner and the data store.
 */
@Configuration(proxyBeanMethods = false)
public class WorkerIndexRebuildConfiguration {

    @Bean
    @ConditionalOnProperty(name = "holdfast.cluster.role", havingValue = "master")
    WorkerIndexRebuildJobs workerIndexRebuildJobs(DedupLinks links, WorkerRegistry registry, Jobs jobs, DataStore store,
            HoldfastProperties props, DedupEngineConfiguration.SungemProperties sungem) {
        HoldfastProperties.Dedup dedup = props.dedup();
        return new WorkerIndexRebuildJobs(links, registry, jobs, store, new WorkerIndexRebuildJobs.Settings(
                "cluster".equals(dedup.engine()), dedup.cluster().clusterMode(), dedup.cluster().clusterBroadcast(),
                sungem.toSettings().uSegment()));
    }
}
