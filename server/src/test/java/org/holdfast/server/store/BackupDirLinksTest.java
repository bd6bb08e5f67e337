package org.holdfast.server.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Names a forged verification record could hand the set-aside ({@code ..}, absolute, through a link
 * in a parent component) resolve to nothing; a relative link counts as a link.
 */
class BackupDirLinksTest {
    @TempDir
    Path tmp;

    @Test
    void inside_namesThatLeaveTheDirectoryOrPassALink_null() throws Exception {
        Path root = tmp.resolve("backups");
        Files.createDirectories(root.resolve("shared_checksum"));
        Files.writeString(root.resolve("shared_checksum").resolve("1_a_9.sst"), "table");
        Files.createDirectories(tmp.resolve("outside"));
        Files.writeString(tmp.resolve("outside").resolve("x.sst"), "not ours");
        Files.createSymbolicLink(root.resolve("shared"), Path.of("../outside")); // relative

        assertThat(BackupDirLinks.inside(root, "shared_checksum/1_a_9.sst")).isEqualTo(root.resolve("shared_checksum/1_a_9.sst"));
        assertThat(BackupDirLinks.inside(root, "shared_checksum/..")).as("the directory itself").isNull();
        assertThat(BackupDirLinks.inside(root, "shared_checksum/../../outside/x.sst")).isNull();
        assertThat(BackupDirLinks.inside(root, tmp.resolve("outside/x.sst").toString())).as("absolute").isNull();
        assertThat(BackupDirLinks.inside(root, "shared/x.sst")).as("a link in a parent component").isNull();
        assertThat(BackupDirLinks.inside(root, "shared_checksum/../shared/x.sst")).isNull();
        assertThat(BackupDirLinks.problem(root)).contains("shared is a symbolic link");
        assertThat(Files.readString(tmp.resolve("outside").resolve("x.sst"))).isEqualTo("not ours");
    }
}
