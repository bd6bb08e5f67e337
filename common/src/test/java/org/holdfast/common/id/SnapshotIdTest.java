package org.holdfast.common.id;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class SnapshotIdTest {
    private static final VolumeId DB = new VolumeId("db01");

    @Test
    void parse_fullIdOrSequence_sameSnapshot() {
        assertThat(SnapshotId.parse("db01@3", DB)).isEqualTo(new SnapshotId(DB, 3));
        assertThat(SnapshotId.parse("3", DB)).isEqualTo(new SnapshotId(DB, 3));
        assertThat(SnapshotId.parse(" 3 ", DB)).isEqualTo(new SnapshotId(DB, 3));
    }

    @Test
    void parse_toStringRoundTrips() {
        SnapshotId id = new SnapshotId(new VolumeId("a.b-c_d"), 42);
        assertThat(SnapshotId.parse(id.toString(), id.volume())).isEqualTo(id);
        assertThat(id.toString()).isEqualTo("a.b-c_d@42");
    }

    @Test
    void parse_otherVolume_refusedNamingBoth() {
        assertThatThrownBy(() -> SnapshotId.parse("web@3", DB)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("web").hasMessageContaining("db01");
    }

    @Test
    void parse_badSequences_refused() {
        for (String bad : new String[] {"", "0", "-1", "+3", "abc", "db01@", "db01@0", "3.0", "99999999999999999999", "db01@x"}) {
            assertThatThrownBy(() -> SnapshotId.parse(bad, DB)).as(bad).isInstanceOf(IllegalArgumentException.class);
        }
        assertThatThrownBy(() -> SnapshotId.parse(null, DB)).isInstanceOf(IllegalArgumentException.class);
    }
}
