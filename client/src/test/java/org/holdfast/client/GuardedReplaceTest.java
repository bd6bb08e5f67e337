package org.holdfast.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The agent's small files are replaced whole, privately, and leave no temporary file behind. */
class GuardedReplaceTest {
    @TempDir
    Path dir;

    @Test
    void write_replacesTheFileWhole_privateAndNoTemporaryLeft() throws Exception {
        Path f = dir.resolve("known-servers");
        Files.writeString(f, "old");
        GuardedReplace.write(f, "new contents\n".getBytes(StandardCharsets.UTF_8));

        assertThat(f).hasContent("new contents");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(f))).isEqualTo("rw-------");
        try (var files = Files.list(dir)) {
            assertThat(files).containsExactly(f);
        }
    }

    @Test
    void write_renameFails_oldFileKeptAndTemporaryDeleted() throws Exception {
        Path target = Files.createDirectory(dir.resolve("taken")); // a non-empty directory cannot be replaced by a file
        Files.writeString(target.resolve("inside"), "keep");

        assertThatThrownBy(() -> GuardedReplace.write(target, new byte[10])).isInstanceOf(java.io.IOException.class);

        assertThat(target.resolve("inside")).hasContent("keep");
        try (var files = Files.list(dir)) {
            assertThat(files).containsExactly(target);
        }
    }
}
