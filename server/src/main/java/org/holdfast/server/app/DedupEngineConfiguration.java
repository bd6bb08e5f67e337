package org.holdfast.server.app;

import java.time.Clock;
import java.time.Duration;
import org.holdfast.server.cluster.WorkerRegistry;
import org.holdfast.server.engine.ClusterFingerprintIndex;
import org.holdfast.server.engine.ExactFingerprintIndex;
import org.holdfast.server.engine.FingerprintIndex;
import org.holdfast.server.engine.ShadowedFingerprintIndex;
import org.holdfast.server.engine.SungemFingerprintIndex;
import org.holdfast.server.engine.SungemSettings;
import org.holdfast.server.ingest.cluster.DedupLinks;
import org.holdfast.server.ingest.cluster.RemoteFingerprintIndex;
import org.holdfast.server.store.DataDirectory;
import org.holdfast.server.store.MetadataDb;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.unit.DataSize;

/**
 * Wires the Sungem dedup engine when {@code holdfast.dedup.engine} is {@code sungem} (the default in
 * application.yml), or the master/worker engine over in-process Sungem workers when it is
 * {@code cluster} (a preview, {@code holdfast.dedup.cluster.*}). With {@code engine: exact},
 * {@link ExactIndexConfiguration} supplies the exact index instead, so exactly one
 * {@link FingerprintIndex} bean exists either way. With {@code holdfast.dedup.shadow-exact: true} an
 * exact index runs beside the engine on the same stream and the measured efficiency is exported
 * ({@link DedupEngineMetrics}).
 */
@Configuration(proxyBeanMethods = false)
@Conditional(OnStandaloneOrMaster.class)
@ConditionalOnExpression("'${holdfast.dedup.engine:sungem}' != 'exact'")
@EnableConfigurationProperties(DedupEngineConfiguration.SungemProperties.class)
public class DedupEngineConfiguration {

    /**
     * {@code holdfast.dedup.sungem.*}: the thesis' eight parameters and those of the Bloom filter
     * chain; defaults and their reasons are in {@link SungemSettings}.
     */
    @ConfigurationProperties("holdfast.dedup.sungem")
    public record SungemProperties(
            @DefaultValue("4096") int uSegment,
            @DefaultValue("2") int k,
            @DefaultValue("2") int tBsu,
            @DefaultValue("64MB") DataSize sfiSize,
            @DefaultValue("16") int sInit,
            @DefaultValue("256MB") DataSize containerCacheSize,
            @DefaultValue("8") int tSummary,
            @DefaultValue("16384") int uContainer,
            @DefaultValue("1d") Duration bloomPeriod,
            @DefaultValue("9") int bloomPeriods,
            @DefaultValue("4000000") long bloomExpectedPerPeriod,
            @DefaultValue("0.01") double bloomFalsePositiveRate,
            @DefaultValue("2ms") Duration readOnlyLockTimeout,
            @DefaultValue("false") boolean exactFallback,
            @DefaultValue("4") int recentContainers,
            @DefaultValue("2") int stableLevels) {

        /** The engine's settings; bounds are checked there and fail startup with the setting's name. */
        public SungemSettings toSettings() {
            return new SungemSettings(uSegment, k, tBsu, sfiSize.toBytes(), sInit, containerCacheSize.toBytes(), tSummary,
                    uContainer, bloomPeriod, bloomPeriods, bloomExpectedPerPeriod, bloomFalsePositiveRate,
                    readOnlyLockTimeout, exactFallback, recentContainers, stableLevels);
        }
    }

    @Bean(destroyMethod = "close")
    FingerprintIndex sungemFingerprintIndex(DataDirectory dir, SungemProperties props, HoldfastProperties holdfast,
            Clock clock, MetadataDb db, ObjectProvider<DedupLinks> dedupLinks,
            ObjectProvider<WorkerRegistry> registry) {
        HoldfastProperties.Dedup dedup = holdfast.dedup();
        boolean cluster = "cluster".equals(dedup.engine());
        // a master uses its registered workers; a standalone server runs the workers in its own process
        FingerprintIndex engine = cluster && dedupLinks.getIfAvailable() != null
                ? new RemoteFingerprintIndex(dedupLinks.getObject(), registry.getObject(), dedup.cluster().clusterMode(),
                        dedup.cluster().clusterBroadcast(), props.toSettings())
                : cluster ? ClusterFingerprintIndex.inProcess(dir.root(), dedup.cluster().workers(), dedup.cluster().clusterMode(),
                        dedup.cluster().clusterBroadcast(), props.toSettings(), clock)
                : new SungemFingerprintIndex(dir.root(), props.toSettings(), clock);
        if (dedup.shadowExact()) {
            return new ShadowedFingerprintIndex(engine, new ExactFingerprintIndex(db));
        }
        return engine;
    }

    @Bean
    DedupEngineMetrics dedupEngineMetrics(FingerprintIndex index) {
        return new DedupEngineMetrics(index);
    }
}
