package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.holdfast.server.engine.ClusterBroadcast;
import org.holdfast.server.engine.ClusterMode;
import org.junit.jupiter.api.Test;

/** {@code holdfast.dedup.*}: the engines accepted and the cluster preview's settings, refused with their names. */
class DedupPropertiesTest {

    @Test
    void dedup_clusterEngineWithDefaults_accepted() {
        HoldfastProperties.Dedup d = new HoldfastProperties.Dedup("cluster", new HoldfastProperties.DedupCluster(4, "nearest", "two-phase"), false);
        assertThat(d.cluster().clusterMode()).isEqualTo(ClusterMode.NEAREST);
        assertThat(new HoldfastProperties.DedupCluster(8, "hash", "two-phase").clusterMode()).isEqualTo(ClusterMode.HASH);
    }

    @Test
    void dedup_unknownEngine_refusedNamingTheChoices() {
        assertThatThrownBy(() -> new HoldfastProperties.Dedup("clustered", new HoldfastProperties.DedupCluster(4, "nearest", "two-phase"), false))
                .hasMessage("holdfast.dedup.engine must be 'sungem', 'exact' or 'cluster', not 'clustered'");
    }

    @Test
    void dedupCluster_badWorkersOrMode_refusedNamingTheSetting() {
        assertThatThrownBy(() -> new HoldfastProperties.DedupCluster(0, "nearest", "two-phase"))
                .hasMessage("holdfast.dedup.cluster.workers must be 1 to 64, not 0");
        assertThatThrownBy(() -> new HoldfastProperties.DedupCluster(4, "ring", "two-phase"))
                .hasMessage("holdfast.dedup.cluster.mode must be 'nearest' or 'hash', not 'ring'");
    }

    @Test
    void dedupCluster_broadcast_parsedOrRefusedNamingTheSetting() {
        assertThat(new HoldfastProperties.DedupCluster(4, "nearest", "two-phase").clusterBroadcast()).isEqualTo(ClusterBroadcast.TWO_PHASE);
        assertThat(new HoldfastProperties.DedupCluster(4, "nearest", "full").clusterBroadcast()).isEqualTo(ClusterBroadcast.FULL);
        assertThatThrownBy(() -> new HoldfastProperties.DedupCluster(4, "nearest", "multicast"))
                .hasMessage("holdfast.dedup.cluster.broadcast must be 'two-phase' or 'full', not 'multicast'");
    }
}
