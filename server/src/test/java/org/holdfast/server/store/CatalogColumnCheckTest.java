package org.holdfast.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CatalogColumnCheckTest {
    @TempDir
    Path dir;

    /** Every file of the catalog with its bytes' hash, to show that a refusal wrote nothing. */
    private Map<String, Integer> files() throws Exception {
        Map<String, Integer> out = new TreeMap<>();
        try (Stream<Path> s = Files.list(dir)) {
            for (Path p : s.toList()) {
                out.put(p.getFileName().toString(), java.util.Arrays.hashCode(Files.readAllBytes(p)));
            }
        }
        return out;
    }

    @Test
    void open_catalogOfNewerRelease_refusedNamingColumnsAndRollback_nothingChanged() throws Exception {
        // a newer release's catalog: every column family of this one plus one this release does not know
        try (MetadataDb db = MetadataDb.open(dir, List.of("from-a-newer-release"), false)) {
            db.put(db.handle("from-a-newer-release"), new byte[] {1}, new byte[] {7});
        }
        Map<String, Integer> before = files();

        assertThatThrownBy(() -> MetadataDb.open(dir)).isInstanceOf(StoreException.class)
                .hasMessageContaining("[from-a-newer-release]").hasMessageContaining("a newer Holdfast release wrote this data directory")
                .hasMessageContaining("\"Upgrading\"").hasMessageContaining("nothing was changed")
                .hasMessageNotContaining("Column families not opened");

        assertThat(files()).isEqualTo(before);
        try (MetadataDb db = MetadataDb.open(dir, List.of("from-a-newer-release"), false)) {
            assertThat(db.get(db.handle("from-a-newer-release"), new byte[] {1})).containsExactly(7);
        }
    }

    @Test
    void open_catalogOfThisRelease_opensAgain() {
        try (MetadataDb db = MetadataDb.open(dir)) {
            db.put(db.handle(MetadataDb.Column.META), new byte[] {1}, new byte[] {1});
        }
        try (MetadataDb db = MetadataDb.open(dir)) {
            assertThat(db.get(MetadataDb.Column.META, new byte[] {1})).containsExactly(1);
        }
    }
}
