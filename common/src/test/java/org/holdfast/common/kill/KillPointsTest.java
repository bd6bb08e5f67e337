package org.holdfast.common.kill;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HashSet;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class KillPointsTest {
    @AfterEach
    void disarm() {
        KillPoints.disarm();
    }

    @Test
    void all_everyPoint_hasUniqueDottedNameAndDescription() {
        List<KillPoint> all = KillPoints.all();
        assertThat(all).hasSizeGreaterThanOrEqualTo(9);
        assertThat(new HashSet<>(all.stream().map(KillPoint::name).toList())).hasSize(all.size());
        assertThat(all).allSatisfy(p -> {
            assertThat(p.name()).matches("[a-z]+(\\.[a-zA-Z]+)+");
            assertThat(p.description()).isNotBlank();
            assertThat(KillPoints.named(p.name())).contains(p);
        });
    }

    @Test
    void hit_disarmed_doesNothing() {
        for (KillPoint p : KillPoints.all()) {
            KillPoints.hit(p);
        }
        assertThat(KillPoints.armedPoint()).isEmpty();
    }

    @Test
    void hit_armedWithCount_throwsAtTheCountthHitOfThatPointOnly() {
        KillPoints.armFromSpec("compaction.afterCopy,3", KillPoints.Mode.THROW);
        KillPoints.hit(KillPoints.COMPACTION_AFTER_COPY);
        KillPoints.hit(KillPoints.COMMIT_AFTER_CATALOG_BATCH); // another point does not count
        KillPoints.hit(KillPoints.COMPACTION_AFTER_COPY);
        assertThatThrownBy(() -> KillPoints.hit(KillPoints.COMPACTION_AFTER_COPY))
                .isInstanceOf(KillPoints.Killed.class).hasMessageContaining("compaction.afterCopy");
        assertThat(KillPoints.reached()).contains("compaction.afterCopy");
        KillPoints.hit(KillPoints.COMPACTION_AFTER_COPY); // disarmed after it killed
        assertThat(KillPoints.armedPoint()).isEmpty();
    }

    @Test
    void armFromSpec_unknownNameOrBadCount_refusedAndNothingArmed() {
        assertThatThrownBy(() -> KillPoints.armFromSpec("gc.nowhere", KillPoints.Mode.THROW))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("unknown kill point 'gc.nowhere'")
                .hasMessageContaining("commit.afterCatalogBatch");
        assertThatThrownBy(() -> KillPoints.armFromSpec("compaction.afterCopy,x", KillPoints.Mode.THROW))
                .hasMessageContaining("not a number");
        assertThatThrownBy(() -> KillPoints.armFromSpec("compaction.afterCopy,0", KillPoints.Mode.THROW))
                .hasMessageContaining("at least 1");
        assertThat(KillPoints.armedPoint()).isEmpty();
    }
}
