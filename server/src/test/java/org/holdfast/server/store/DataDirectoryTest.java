package org.holdfast.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DataDirectoryTest {
    @TempDir
    Path dir;

    @Test
    void open_whileAnotherHoldsIt_failsNamingTheLock() {
        try (DataDirectory first = DataDirectory.open(dir.resolve("d"))) {
            assertThatThrownBy(() -> DataDirectory.open(dir.resolve("d")))
                    .isInstanceOf(StoreException.class)
                    .hasMessageContaining("in use by another Holdfast server")
                    .hasMessageContaining(DataDirectory.LOCK_FILE);
            assertThat(first.root()).exists();
        }
        try (DataDirectory again = DataDirectory.open(dir.resolve("d"))) {
            assertThat(again.catalogDir()).isEqualTo(again.root().resolve("catalog"));
        }
    }

    @Test
    void open_readOnlyDirectory_failsSayingNotWritable() throws Exception {
        Assumptions.assumeFalse("root".equals(System.getProperty("user.name")), "root can write anywhere");
        Path ro = Files.createDirectory(dir.resolve("ro"));
        Files.setPosixFilePermissions(ro, PosixFilePermissions.fromString("r-xr-xr-x"));
        assertThatThrownBy(() -> DataDirectory.open(ro)).isInstanceOf(StoreException.class).hasMessageContaining("not writable");
    }

    @Test
    void open_pathIsAFile_failsClearly() throws Exception {
        Path file = Files.writeString(dir.resolve("file"), "x");
        assertThatThrownBy(() -> DataDirectory.open(file)).isInstanceOf(StoreException.class).hasMessageContaining("data directory");
    }
}
