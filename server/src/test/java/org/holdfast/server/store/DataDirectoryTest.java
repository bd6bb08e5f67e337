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
    void openReadOnly_whileAServerHoldsIt_refused_andAServerRefusedWhileACheckerHoldsIt() throws Exception {
        Path d = dir.resolve("d");
        try (DataDirectory server = DataDirectory.open(d)) {
            Files.createDirectories(server.catalogDir());
            assertThatThrownBy(() -> DataDirectory.openReadOnly(d)).isInstanceOf(StoreException.class)
                    .hasMessageContaining("in use by a running Holdfast server").hasMessageContaining("stop it first");
        }
        try (DataDirectory checker = DataDirectory.openReadOnly(d)) {
            assertThatThrownBy(() -> DataDirectory.open(d)).isInstanceOf(DataDirectoryInUseException.class);
            assertThat(checker.root()).isEqualTo(d.toAbsolutePath().normalize());
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

    @Test
    void open_newDirectory_readableByItsOwnerOnly() throws Exception {
        Path d = dir.resolve("fresh");
        try (DataDirectory ignored = DataDirectory.open(d)) {
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(d))).isEqualTo("rwx------");
        }
    }

    @Test
    void protect_existingDirectoryOpenToOthers_leftAsIsAndReported() throws Exception {
        Path d = Files.createDirectory(dir.resolve("shared"));
        Files.setPosixFilePermissions(d, PosixFilePermissions.fromString("rwxr-xr-x"));
        assertThat(DataDirectory.protect(d, true)).isFalse();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(d))).isEqualTo("rwxr-xr-x");
        Files.setPosixFilePermissions(d, PosixFilePermissions.fromString("rwx------"));
        assertThat(DataDirectory.protect(d, true)).isTrue();
    }
}
