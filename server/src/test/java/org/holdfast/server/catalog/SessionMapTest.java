package org.holdfast.server.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The session map keeps at most its buffer in memory, spills the rest in order, and leaves no file behind. */
class SessionMapTest {
    @TempDir
    Path dir;

    private static List<long[]> read(SessionMap m) {
        List<long[]> out = new ArrayList<>();
        try (SessionMap.Cursor c = m.cursor()) {
            while (c.next()) {
                out.add(new long[] {c.lbn(), c.pbn()});
            }
        }
        return out;
    }

    @Test
    void spills_pastItsBuffer_andReadsBackEveryEntryInOrder() throws Exception {
        Path file = dir.resolve("s.spill");
        try (SessionMap m = new SessionMap(file, 1000)) {
            for (long i = 0; i < 10_500; i++) {
                m.add(3 * i + 1, i * 7);
            }
            assertThat(m.size()).isEqualTo(10_500);
            assertThat(m.spilledEntries()).as("whole buffers of 1000 went to disk, the last 500 stay in memory").isEqualTo(10_000);
            assertThat(Files.size(file)).isEqualTo(10_000L * SessionMap.ENTRY_BYTES);
            List<long[]> all = read(m);
            assertThat(all).hasSize(10_500);
            for (int i = 0; i < all.size(); i++) {
                assertThat(all.get(i)).containsExactly(3L * i + 1, i * 7L);
            }
            assertThat(read(m)).as("a second cursor reads the same").hasSize(10_500);
        }
        assertThat(file).as("close deletes the spill file").doesNotExist();
    }

    @Test
    void smallSession_neverCreatesAFile() {
        Path file = dir.resolve("small.spill");
        try (SessionMap m = new SessionMap(file, 1000)) {
            for (long i = 0; i < 1000; i++) {
                m.add(i, i + 1);
            }
            assertThat(file).doesNotExist();
            assertThat(read(m)).hasSize(1000);
        }
    }

    @Test
    void duplicateOrDecreasingLbn_isRefused_acrossASpillToo() {
        try (SessionMap m = new SessionMap(dir.resolve("d.spill"), 2)) {
            m.add(5, 1);
            m.add(6, 1);
            m.add(7, 1); // spills 5 and 6
            assertThatThrownBy(() -> m.add(7, 2)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("must increase");
            assertThatThrownBy(() -> m.add(6, 2)).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> m.add(8, -1)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("negative PBN");
            assertThat(read(m)).extracting(e -> e[0]).containsExactly(5L, 6L, 7L);
        }
    }

    @Test
    void closedMap_refusesUse_andCloseIsIdempotent() {
        SessionMap m = new SessionMap(dir.resolve("c.spill"), 4);
        m.add(1, 1);
        m.close();
        m.close();
        assertThatThrownBy(() -> m.add(2, 2)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(m::cursor).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void inMemoryMap_growsWithoutAFile() {
        try (SessionMap m = new SessionMap(4)) {
            for (long i = 0; i < 100_000; i++) {
                m.add(i, i);
            }
            assertThat(m.spilledEntries()).isZero();
            assertThat(m.spillFile()).isNull();
            assertThat(read(m)).hasSize(100_000);
        }
    }
}
