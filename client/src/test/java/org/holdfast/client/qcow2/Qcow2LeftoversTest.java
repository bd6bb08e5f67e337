package org.holdfast.client.qcow2;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.holdfast.client.LeftoverRules;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a killed qcow2 backup leaves (a bitmap record's temporary copy, qemu-nbd's socket directory) goes at the next one; a live agent's stays. */
class Qcow2LeftoversTest {
    @TempDir
    Path dir;
    final List<String> notices = new ArrayList<>();

    @Test
    void bitmapRecord_savedWithoutTemporary_killedSavesLeftoverRemoved_liveOneKept() throws Exception {
        Path record = BitmapChain.pathFor(dir.resolve("vm1.state"));
        new BitmapChain("/img", 1 << 20, "holdfast-x-0123456789abcdef", 3).save(record);
        assertThat(BitmapChain.load(record).chain().sequence()).isEqualTo(3);
        try (var files = Files.list(dir)) {
            assertThat(files).containsExactly(record);
        }

        LeftoverRules.check(dir, "vm1.state.bitmap.", ".tmp", () -> BitmapChain.removeLeftovers(record, notices::add), notices);

        assertThat(BitmapChain.load(record).chain().sequence()).as("the record itself untouched").isEqualTo(3);
    }

    Path nbdDir(String random, Long pid) throws Exception {
        Path d = Files.createDirectory(dir.resolve(NbdSocketDirs.PREFIX + random));
        Files.writeString(d.resolve("s"), ""); // stands for the socket
        if (pid != null) {
            Files.writeString(d.resolve(NbdSocketDirs.PID_FILE), pid + "\n");
        }
        return d;
    }

    @Test
    void nbdSocketDirs_qemuNbdGone_removed_running_kept_untilItEnds() throws Exception {
        Process gone = new ProcessBuilder("true").start();
        gone.waitFor();
        Process running = new ProcessBuilder("sleep", "60").start();
        try {
            Path dead = nbdDir("123", gone.pid());
            Path live = nbdDir("456", running.pid());

            assertThat(NbdSocketDirs.removeLeftovers(dir, notices::add)).containsExactly(dead);
            assertThat(dead).doesNotExist();
            assertThat(live.resolve("s")).exists();
            assertThat(notices).singleElement().asString().contains(dead.toString()).contains("qemu-nbd");
        } finally {
            running.destroyForcibly().waitFor();
        }
        assertThat(NbdSocketDirs.removeLeftovers(dir, notices::add)).containsExactly(dir.resolve(NbdSocketDirs.PREFIX + "456"));
    }

    @Test
    void nbdSocketDirs_noPidFile_keptWhileItsAgentMayBeStartingQemuNbd() throws Exception {
        Path starting = nbdDir("77", null);
        assertThat(NbdSocketDirs.removeLeftovers(dir, notices::add)).isEmpty();

        Files.setLastModifiedTime(starting, FileTime.from(Instant.now().minus(NbdSocketDirs.START_GRACE).minusSeconds(5)));
        assertThat(NbdSocketDirs.removeLeftovers(dir, notices::add)).containsExactly(starting);
    }

    @Test
    void nbdSocketDirs_namesThatOnlyResemble_neverRemoved() throws Exception {
        Process gone = new ProcessBuilder("true").start();
        gone.waitFor();
        Path other = Files.createDirectory(dir.resolve("elsewhere"));
        Files.writeString(other.resolve(NbdSocketDirs.PID_FILE), gone.pid() + "\n");
        List<Path> alike = new ArrayList<>();
        for (String name : List.of("holdfast-nbd-x1", "holdfast-nbd-", "holdfast-nbd-01", "xholdfast-nbd-5", "holdfast-nbd-5.tmp")) {
            Path d = Files.createDirectory(dir.resolve(name));
            Files.writeString(d.resolve(NbdSocketDirs.PID_FILE), gone.pid() + "\n");
            alike.add(d);
        }
        alike.add(Files.createSymbolicLink(dir.resolve(NbdSocketDirs.PREFIX + "8"), other));
        Path file = dir.resolve(NbdSocketDirs.PREFIX + "9");
        Files.writeString(file, "");
        alike.add(file);

        assertThat(NbdSocketDirs.removeLeftovers(dir, notices::add)).isEmpty();

        assertThat(alike).allSatisfy(p -> assertThat(Files.exists(p, LinkOption.NOFOLLOW_LINKS)).isTrue());
        assertThat(other.resolve(NbdSocketDirs.PID_FILE)).exists();
    }
}
