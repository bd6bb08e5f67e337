package org.holdfast.bench.workload;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Both ways of editing an image must leave the same files behind (checked through debugfs). */
class Ext4EditorTest {
    @TempDir
    Path tmp;

    private static String cat(Path image, String path) throws IOException {
        return Processes.run(List.of("debugfs", "-R", "cat \"/" + path + "\"", image.toString()), null);
    }

    private void exercise(Path image, Ext4Editor ed) throws IOException {
        Path tree = Files.createDirectories(tmp.resolve("tree/usr/share/x"));
        Files.writeString(tree.resolve("a.txt"), "alpha\n");
        Files.createSymbolicLink(tree.resolve("link"), Path.of("a.txt"));
        Files.writeString(tmp.resolve("tree/gone.txt"), "bye\n");
        Path page = tmp.resolve("db");
        byte[] pages = new byte[3 * 8192];
        java.util.Arrays.fill(pages, (byte) 'o');
        Files.write(page, pages);
        ed.copyTree(tmp.resolve("tree"));
        ed.delete(List.of("gone.txt"));
        ed.writeFile("srv/doc.txt", "v1\n".getBytes(StandardCharsets.US_ASCII));
        ed.writeFile("srv/doc.txt", "v2\n".getBytes(StandardCharsets.US_ASCII));
        ed.append("var/log/syslog", "one\n".getBytes(StandardCharsets.US_ASCII));
        ed.append("var/log/syslog", "two\n".getBytes(StandardCharsets.US_ASCII));
        ed.installFile("var/db/pages.db", page);
        byte[] data = new byte[8192];
        java.util.Arrays.fill(data, (byte) 'P');
        ed.writePages("var/db/pages.db", 8192, new long[] {1}, data);
        ed.close();
    }

    private void check(Path image) throws IOException {
        assertThat(cat(image, "usr/share/x/a.txt")).isEqualTo("alpha\n");
        assertThat(cat(image, "srv/doc.txt")).isEqualTo("v2\n");
        assertThat(cat(image, "var/log/syslog")).isEqualTo("one\ntwo\n");
        assertThat(cat(image, "gone.txt")).isEmpty();
        String db = cat(image, "var/db/pages.db");
        assertThat(db).hasSize(3 * 8192);
        assertThat(db.substring(8192, 16384)).containsOnlyOnce("P".repeat(8192));
        assertThat(db.substring(0, 8192)).isEqualTo("o".repeat(8192));
        String ls = Processes.run(List.of("debugfs", "-R", "stat /usr/share/x/link", image.toString()), null);
        assertThat(ls).contains("Type: symlink");
    }

    @Test
    void debugfsEditor_everyOperation_leavesTheExpectedFiles() throws IOException {
        Path image = tmp.resolve("d.img");
        Ext4Image.format(image, 32L << 20, 1);
        exercise(image, new DebugfsExt4Editor(image, tmp.resolve("staging")));
        check(image);
    }

    @Test
    void debugfsEditor_pagesOfASparseFile_areRewrittenThroughTheShadow() throws IOException {
        Path image = tmp.resolve("s.img");
        Ext4Image.format(image, 32L << 20, 1);
        Path zeros = tmp.resolve("zeros");
        Files.write(zeros, new byte[3 * 8192]);
        DebugfsExt4Editor ed = new DebugfsExt4Editor(image, tmp.resolve("staging"));
        ed.installFile("db", zeros);
        byte[] data = new byte[8192];
        java.util.Arrays.fill(data, (byte) 'P');
        ed.writePages("db", 8192, new long[] {2}, data);
        ed.close();

        String db = cat(image, "db");
        assertThat(db).hasSize(3 * 8192);
        assertThat(db.substring(16384)).isEqualTo("P".repeat(8192));
    }

    @Test
    void mountedEditor_everyOperation_leavesTheExpectedFiles() throws IOException {
        org.junit.jupiter.api.Assumptions.assumeTrue(MountedExt4Editor.available(tmp.resolve("probe")),
                "loop mounting is not possible here (the debugfs editor is tested instead)");
        Path image = tmp.resolve("m.img");
        Ext4Image.format(image, 32L << 20, 1);
        exercise(image, MountedExt4Editor.mount(image, tmp.resolve("mnt")));
        check(image);
    }
}
