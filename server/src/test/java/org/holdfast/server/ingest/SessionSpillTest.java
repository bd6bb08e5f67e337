package org.holdfast.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.holdfast.server.catalog.SessionMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Spill files are named per session, and what a crash left behind is removed at start, nothing else. */
class SessionSpillTest {
    @TempDir
    Path dir;

    @Test
    void removeLeftovers_deletesOnlySpillFiles() throws Exception {
        SessionSpill spill = new SessionSpill(dir, 1024);
        SessionMap m = spill.newMap(7);
        for (long i = 0; i < 3000; i++) {
            m.add(i, i);
        }
        assertThat(m.spillFile()).exists().hasFileName(m.spillFile().getFileName().toString());
        assertThat(m.spillFile().getFileName().toString()).startsWith("session-7-").endsWith(SessionSpill.SUFFIX);
        Path other = Files.writeString(dir.resolve("keep.txt"), "not ours");
        // the process "crashes": the map is never closed
        assertThat(spill.removeLeftovers()).isEqualTo(1);
        assertThat(m.spillFile()).doesNotExist();
        assertThat(other).exists();
        assertThat(new SessionSpill(dir.resolve("missing"), 1024).removeLeftovers()).isZero();
    }

    @Test
    void twoSessionsWithTheSameId_getDifferentFiles() {
        SessionSpill spill = new SessionSpill(dir, 1024);
        try (SessionMap a = spill.newMap(1); SessionMap b = spill.newMap(1)) {
            assertThat(a.spillFile()).isNotEqualTo(b.spillFile());
        }
    }

    @Test
    void tooSmallABound_isRefusedWithTheSettingNamed() {
        assertThatThrownBy(() -> new SessionSpill(dir, 10)).hasMessageContaining("holdfast.ingest.session-memory-entries");
    }
}
