package org.holdfast.bench.runner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class EngineOptionTest {

    @Test
    void serverArgs_standaloneEngines_nameTheEngineOnly() {
        assertThat(EngineOption.serverArgs("sungem")).containsExactly("--holdfast.dedup.engine=sungem");
        assertThat(EngineOption.serverArgs("exact")).containsExactly("--holdfast.dedup.engine=exact");
    }

    @Test
    void serverArgs_clusterNames_selectWorkersAndMode() {
        assertThat(EngineOption.serverArgs("cluster4")).containsExactly("--holdfast.dedup.engine=cluster",
                "--holdfast.dedup.cluster.workers=4", "--holdfast.dedup.cluster.mode=nearest");
        assertThat(EngineOption.serverArgs("cluster8-hash")).containsExactly("--holdfast.dedup.engine=cluster",
                "--holdfast.dedup.cluster.workers=8", "--holdfast.dedup.cluster.mode=hash");
        assertThat(EngineOption.serverArgs("cluster2-full")).containsExactly("--holdfast.dedup.engine=cluster",
                "--holdfast.dedup.cluster.workers=2", "--holdfast.dedup.cluster.mode=nearest", "--holdfast.dedup.cluster.broadcast=full");
    }

    @Test
    void serverArgs_unknownOrZeroWorkers_refusedWithTheAcceptedNames() {
        assertThatThrownBy(() -> EngineOption.serverArgs("cluster0")).hasMessageContaining("cluster<N>");
        assertThatThrownBy(() -> EngineOption.serverArgs("sungen")).hasMessageContaining("unknown engine 'sungen'");
    }
}
