package org.holdfast.server.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The layouts of the daily statistics and agent records, and the bounds of both stores, on a real RocksDB. */
class StatsRecordFormatTest {
    @TempDir
    Path dir;

    @Test
    void dailyRecord_roundTripsAndRangesAreInclusiveAndPruned() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            DailyStatsStore s = new DailyStatsStore(db);
            LocalDate d0 = LocalDate.of(2026, 1, 1);
            for (int i = 0; i < 5; i++) {
                s.put(new DailyStatsStore.Day(d0.plusDays(i), 100 + i, 200 + i, 2.5, i, 2L * i, 7, 1000 + i));
            }
            s.put(new DailyStatsStore.Day(d0.plusDays(2), 1, 2, 3.0, 4, 5, 6, 7)); // rewritten in place
            List<DailyStatsStore.Day> r = s.range(d0.plusDays(1), d0.plusDays(3), 100);
            assertThat(r).extracting(DailyStatsStore.Day::day).containsExactly(d0.plusDays(1), d0.plusDays(2), d0.plusDays(3));
            assertThat(r.get(1)).isEqualTo(new DailyStatsStore.Day(d0.plusDays(2), 1, 2, 3.0, 4, 5, 6, 7));
            assertThat(s.deleteBefore(d0.plusDays(3))).isEqualTo(3);
            assertThat(s.range(d0, d0.plusDays(10), 100)).extracting(DailyStatsStore.Day::day)
                    .containsExactly(d0.plusDays(3), d0.plusDays(4));
        }
    }

    @Test
    void dailyRecord_unknownVersionOrLength_corruptDataNamingTheDay() {
        byte[] v = DailyStatsStore.encode(new DailyStatsStore.Day(LocalDate.EPOCH, 1, 2, 1.0, 3, 4, 5, 6));
        assertThat(v[0]).isEqualTo((byte) 1);
        v[0] = 9;
        assertThatThrownBy(() -> DailyStatsStore.decode(LocalDate.EPOCH, v, "db")).isInstanceOf(CorruptDataException.class)
                .hasMessageContaining("1970-01-01").hasMessageContaining("version 9");
        byte[] shortValue = java.util.Arrays.copyOf(DailyStatsStore.encode(new DailyStatsStore.Day(LocalDate.EPOCH, 1, 2, 1.0, 3, 4, 5, 6)), 20);
        assertThatThrownBy(() -> DailyStatsStore.decode(LocalDate.EPOCH, shortValue, "db")).isInstanceOf(CorruptDataException.class);
    }

    @Test
    void agentRecord_roundTripsCutsLongTextAndRejectsTruncation() {
        AgentStore.Agent a = new AgentStore.Agent("id1", "db-host", "10.0.0.1:5000", "holdfast-agent/1.2@x", "1.2", 10, 20, 3,
                List.of(new AgentStore.VolumeResult("db1", true, "snapshot 4", 4096, 15),
                        new AgentStore.VolumeResult("db2", false, "é".repeat(400), 0, 12)));
        AgentStore.Agent back = AgentStore.decode("id1", AgentStore.encode(a), "db");
        assertThat(back.results().get(0)).isEqualTo(a.results().get(0));
        assertThat(back.results().get(1).message()).isEqualTo("é".repeat(256)); // cut at 512 bytes, on a character boundary
        assertThat(back.tokenName()).isEqualTo("db-host");
        byte[] v = AgentStore.encode(a);
        assertThatThrownBy(() -> AgentStore.decode("id1", java.util.Arrays.copyOf(v, v.length - 3), "db"))
                .isInstanceOf(CorruptDataException.class).hasMessageContaining("id1");
    }

    @Test
    void agentStore_boundedResultsPerTokenAndTokens_mostRecentKept() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            AgentStore s = new AgentStore(db);
            s.result("never-connected", new AgentStore.VolumeResult("v", true, "", 1, 1));
            assertThat(s.list()).as("a result without a contact is not recorded").isEmpty();
            s.contact("t1", "one", "a", "agent", "", 1);
            for (int i = 0; i < AgentStore.MAX_RESULTS + 10; i++) {
                s.result("t1", new AgentStore.VolumeResult("vol" + i, true, "", i, 10 + i));
            }
            s.result("t1", new AgentStore.VolumeResult("vol70", false, "boom", 0, 99)); // same volume: replaced, moved first
            AgentStore.Agent a = s.get("t1").orElseThrow();
            assertThat(a.results()).hasSize(AgentStore.MAX_RESULTS);
            assertThat(a.results().get(0).volume()).isEqualTo("vol70");
            assertThat(a.results().get(0).ok()).isFalse();
            assertThat(a.results()).extracting(AgentStore.VolumeResult::volume).doesNotHaveDuplicates().doesNotContain("vol0");
            List<String> ids = new ArrayList<>();
            for (int i = 0; i < AgentStore.MAX_AGENTS + 5; i++) {
                s.contact("x" + i, "n", "a", "agent", "", 100 + i);
                ids.add("x" + i);
            }
            List<AgentStore.Agent> all = s.list();
            assertThat(all).hasSize(AgentStore.MAX_AGENTS);
            assertThat(all.get(0).tokenId()).isEqualTo(ids.get(ids.size() - 1));
            assertThat(s.get("t1")).as("the oldest contact made room").isEmpty();
        }
    }
}
