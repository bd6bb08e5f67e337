package org.holdfast.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** The epoch and adoption rules of a worker's range takeover, on listings alone (bad input refused, nothing else read). */
class RangeTakeoverPlanTest {
    private static String log(long epoch, int id, long logEpoch) {
        return LogKeys.key(WorkerKeys.space(3, epoch), id, logEpoch);
    }

    private static Function<String, byte[]> markers(Map<String, String> texts) {
        return k -> {
            String t = texts.get(k);
            if (t == null) {
                throw new AssertionError("read " + k + ", which the plan should not need");
            }
            return t.getBytes(StandardCharsets.UTF_8);
        };
    }

    @Test
    void plan_noObjectsOfTheWorker_epochOneAdoptingNothing() {
        RangeTakeover.Plan p = RangeTakeover.plan(3, List.of("workers/w30/e4/adopted", "w3/logs/00000001-0000000000000001.hfl"),
                markers(Map.of()));

        assertThat(p.epoch()).isEqualTo(1);
        assertThat(p.adopted()).isEmpty();
    }

    @Test
    void plan_foreignKeysUnderThePrefix_ignored_newestCopyOfEachLogAdopted() {
        List<String> listing = List.of(log(1, 1, 1), log(1, 2, 1), log(1, 2, 5), "workers/w3/readme.txt", "workers/w3/e01/logs/x.hfl",
                "workers/w3/eX/adopted", "workers/w3/e1/logs/junk.hfl", "workers/w3/e1/notes");

        RangeTakeover.Plan p = RangeTakeover.plan(3, listing, markers(Map.of()));

        assertThat(p.epoch()).isEqualTo(2);
        assertThat(p.adopted()).containsExactly(log(1, 1, 1), log(1, 2, 5));
    }

    @Test
    void plan_oldOwnerUploadedAfterTheTakeover_itsLogIsNotAdopted() {
        String marker = new AdoptedMarker(3, 2, List.of(log(1, 1, 1), log(1, 2, 1), log(1, 3, 1))).toText();
        List<String> listing = List.of(log(1, 1, 1), log(1, 2, 1), log(1, 5, 1), WorkerKeys.marker(3, 2), log(2, 4, 9), log(2, 3, 7));

        RangeTakeover.Plan p = RangeTakeover.plan(3, listing, markers(Map.of(WorkerKeys.marker(3, 2), marker)));

        assertThat(p.epoch()).isEqualTo(3);
        // 3 was compacted by epoch 2 (its copy under e2 replaces the one gone from e1); 5 came from the old node after the takeover
        assertThat(p.adopted()).containsExactly(log(1, 1, 1), log(1, 2, 1), log(2, 3, 7), log(2, 4, 9));
    }

    @Test
    void plan_markerNamingAnotherWorkersLog_refusedAsDamaged() {
        String other = LogKeys.key(WorkerKeys.space(4, 1), 1, 1);
        String text = "holdfast-adopted-logs 1\nworker 3\nepoch 2\nlog " + other + "\nend 1\n";

        assertThatThrownBy(() -> RangeTakeover.plan(3, List.of(WorkerKeys.marker(3, 2)), markers(Map.of(WorkerKeys.marker(3, 2), text))))
                .isInstanceOf(CorruptDataException.class).hasMessageContaining("adopted marker is damaged")
                .hasMessageContaining("not a log of worker 3");
    }

    @Test
    void plan_truncatedOrForeignMarker_refusedAsDamaged() {
        String full = new AdoptedMarker(3, 2, List.of(log(1, 1, 1))).toText();
        for (String bad : List.of(full.substring(0, full.length() - 7), full.replace("end 1", "end 2"), "", "PK\u0003\u0004junk\n",
                full.replace("epoch 2", "epoch 9"), full.replace("worker 3", "worker 4"))) {
            assertThatThrownBy(() -> RangeTakeover.plan(3, List.of(WorkerKeys.marker(3, 2), log(1, 1, 1)),
                    markers(Map.of(WorkerKeys.marker(3, 2), bad)))).as(bad).isInstanceOf(CorruptDataException.class)
                    .hasMessageContaining("adopted marker is damaged");
        }
    }

    @Test
    void plan_newestEpochWithoutItsMarker_refused() {
        assertThatThrownBy(() -> RangeTakeover.plan(3, List.of(log(1, 1, 1), log(2, 2, 1)), markers(Map.of())))
                .isInstanceOf(CorruptDataException.class).hasMessageContaining("no adopted marker");
    }
}
