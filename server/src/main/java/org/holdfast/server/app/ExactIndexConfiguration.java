package org.holdfast.server.app;

import org.holdfast.server.engine.ExactFingerprintIndex;
import org.holdfast.server.engine.FingerprintIndex;
import org.holdfast.server.store.MetadataDb;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;

/** The exact fingerprint index, when {@code holdfast.dedup.engine} is {@code exact} (the baseline; {@code sungem} is the default). */
@Configuration(proxyBeanMethods = false)
@Conditional(OnStandaloneOrMaster.class)
@ConditionalOnProperty(name = "holdfast.dedup.engine", havingValue = "exact")
public class ExactIndexConfiguration {

    @Bean(destroyMethod = "close")
    FingerprintIndex exactFingerprintIndex(MetadataDb db) {
        return new ExactFingerprintIndex(db);
    }

    /** The engine-neutral {@code holdfast.dedup.*} meters (fingerprints, duplicates, engine time). */
    @Bean
    DedupEngineMetrics dedupEngineMetrics(FingerprintIndex index) {
        return new DedupEngineMetrics(index);
    }
}
