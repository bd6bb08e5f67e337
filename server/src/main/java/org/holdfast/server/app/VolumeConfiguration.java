package org.holdfast.server.app;

import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.SnapshotCommit;
import org.holdfast.server.catalog.VolumeSettings;
import org.holdfast.server.gc.GcService;
import org.holdfast.server.gc.VolumeGate;
import org.holdfast.server.ingest.BackupAdmission;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.volumes.QuotaAdmission;
import org.holdfast.server.volumes.VolumeAdmin;
import org.holdfast.server.volumes.VolumeUsage;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;

/** Volume administration: settings (quota, last backup result), usage figures, and the ingest's quota check. */
@Configuration(proxyBeanMethods = false)
@Conditional(OnStandaloneOrMaster.class)
public class VolumeConfiguration {

    @Bean
    VolumeSettings volumeSettings(MetadataDb db) {
        return new VolumeSettings(db);
    }

    @Bean
    BackupAdmission quotaAdmission(Catalog catalog, VolumeSettings settings) {
        return new QuotaAdmission(catalog, settings);
    }

    @Bean
    VolumeUsage volumeUsage(Catalog catalog, DataStore dataStore) {
        return new VolumeUsage(catalog, dataStore.locations());
    }

    @Bean
    VolumeAdmin volumeAdmin(Catalog catalog, SnapshotCommit commit, VolumeSettings settings, GcService gc, VolumeGate gate,
                            VolumeUsage usage) {
        return new VolumeAdmin(catalog, commit, settings, gc, gate, usage);
    }
}
