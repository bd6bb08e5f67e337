package org.holdfast.server.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.holdfast.server.security.AuditEvent;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The audit store on a real RocksDB: encoding, newest-first paging, filters, retention, restart. */
class AuditStoreTest {
    private static final long T0 = Instant.parse("2026-06-01T00:00:00Z").toEpochMilli();

    @TempDir
    Path dir;

    private final long[] now = {T0};
    private final java.time.Clock clock = new java.time.Clock() {
        @Override
        public long millis() {
            return now[0];
        }

        @Override
        public Instant instant() {
            return Instant.ofEpochMilli(now[0]);
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public java.time.Clock withZone(ZoneId zone) {
            return this;
        }
    };

    private static AuditEvent ev(long t, String principal, String action, String target, String result) {
        return new AuditEvent(t, principal, "127.0.0.1:1", action, target, result, "");
    }

    private static AuditStore.Query all(int limit, String cursor) {
        return new AuditStore.Query(null, null, null, null, null, null, limit, cursor);
    }

    @Test
    void encode_matchesGoldenFixture_andDecodesBack() {
        AuditEvent e = new AuditEvent(T0, "user:admin", "10.0.0.1:5", "volume.delete", "volume:db1", "conflict", "held");
        byte[] v = AuditStore.encode(e);
        assertThat(HexFormat.of().formatHex(v)).isEqualTo("01"
                + "000a" + "757365723a61646d696e"          // user:admin
                + "000a" + "31302e302e302e313a35"          // 10.0.0.1:5
                + "000d" + "766f6c756d652e64656c657465"    // volume.delete
                + "000a" + "766f6c756d653a646231"          // volume:db1
                + "0008" + "636f6e666c696374"              // conflict
                + "0004" + "68656c64");                    // held
        assertThat(AuditStore.decode(T0, v, "test")).isEqualTo(e);
        assertThat(HexFormat.of().formatHex(AuditStore.key(T0, 3))).isEqualTo("0000019e807aec00" + "0000000000000003");
        v[0] = 9;
        assertThatThrownBy(() -> AuditStore.decode(T0, v, "test")).isInstanceOf(CorruptDataException.class)
                .hasMessageContaining("version 9");
        assertThat(AuditStore.line(e)).isEqualTo("time=2026-06-01T00:00:00Z principal=\"user:admin\" source=\"10.0.0.1:5\""
                + " action=\"volume.delete\" target=\"volume:db1\" result=\"conflict\" detail=\"held\"");
    }

    @Test
    void line_callerChosenControlCharactersAndHugeValue_escapedAndCut() {
        String user = "user:evil\u001b[2J\u0000\"\nFAKE\u0085" + "u".repeat(100_000);
        String line = AuditStore.line(new AuditEvent(T0, user, "10.0.0.1:5", "login", "x", "denied", "wrong username or password"));
        assertThat(line).startsWith("time=2026-06-01T00:00:00Z principal=\"user:evil\\u001b[2J\\u0000\\\"\\nFAKE\\u0085uuu")
                .endsWith(" detail=\"wrong username or password\"");
        assertThat(line.chars().filter(c -> c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0)).count()).isZero();
        assertThat(line.length()).isLessThan(1_000);
    }

    @Test
    void query_pagesNewestFirst_filters_andSurvivesRestart() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            AuditStore s = new AuditStore(db, clock, Duration.ofDays(400));
            for (int i = 0; i < 10; i++) {
                s.record(ev(T0 + i / 2, i % 2 == 0 ? "user:a" : "user:b", i < 5 ? "hold.place" : "volume.delete",
                        "volume:v" + i + "@1", i == 7 ? "conflict" : "ok"));
            }
        }
        try (MetadataDb db = MetadataDb.open(dir)) {
            AuditStore s = new AuditStore(db, clock, Duration.ofDays(400));
            s.record(ev(T0 + 4, "user:c", "gc.run", "", "ok")); // same millisecond as entries 8 and 9: sequence orders it
            List<String> targets = new ArrayList<>();
            String cursor = null;
            int pages = 0;
            do {
                AuditStore.Page p = s.query(all(3, cursor));
                p.entries().forEach(e -> targets.add(e.event().target()));
                cursor = p.nextCursor();
                pages++;
            } while (cursor != null);
            assertThat(pages).isEqualTo(4);
            assertThat(targets).containsExactly("", "volume:v9@1", "volume:v8@1", "volume:v7@1", "volume:v6@1", "volume:v5@1",
                    "volume:v4@1", "volume:v3@1", "volume:v2@1", "volume:v1@1", "volume:v0@1");
            assertThat(s.query(new AuditStore.Query(null, null, "user:b", "volume.delete", null, null, 100, null)).entries())
                    .extracting(e -> e.event().target()).containsExactly("volume:v9@1", "volume:v7@1", "volume:v5@1");
            assertThat(s.query(new AuditStore.Query(null, null, null, null, "volume:v7", "conflict", 100, null)).entries()).hasSize(1);
            assertThat(s.query(new AuditStore.Query(T0 + 1, T0 + 3, null, null, null, null, 100, null)).entries())
                    .extracting(e -> e.event().target()).containsExactly("volume:v5@1", "volume:v4@1", "volume:v3@1", "volume:v2@1");
            assertThatThrownBy(() -> s.query(all(3, "garbage"))).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> all(0, null)).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Test
    void prune_deletesOnlyEntriesOlderThanTheRetention() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            AuditStore s = new AuditStore(db, clock, Duration.ofDays(400));
            s.record(ev(T0, "user:a", "hold.place", "volume:old@1", "ok"));
            s.record(ev(T0 + Duration.ofDays(10).toMillis(), "user:a", "hold.place", "volume:new@1", "ok"));
            now[0] = T0 + Duration.ofDays(405).toMillis();
            assertThat(s.prune(now[0])).isEqualTo(1);
            assertThat(s.query(all(10, null)).entries()).extracting(e -> e.event().target()).containsExactly("volume:new@1");
        }
    }
}
