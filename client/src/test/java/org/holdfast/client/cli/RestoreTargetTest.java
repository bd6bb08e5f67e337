package org.holdfast.client.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import org.holdfast.client.AgentRun;
import org.holdfast.client.FakeServer;
import org.holdfast.client.Images;
import org.holdfast.client.LeakWatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What {@code restore} does to the file it is pointed at: refuses to overwrite, keeps or sets the mode. */
class RestoreTargetTest {
    static final int BS = 4096;

    @TempDir
    Path dir;
    FakeServer server;
    Path image;

    @BeforeEach
    void start() throws Exception {
        server = new FakeServer();
        image = Images.create(dir.resolve("vol.img"), 64 * BS, BS, 1, 3);
        AgentRun b = AgentRun.of("backup", "--server", server.address(), "--no-tls", "--volume", "vm1",
                "--source", image.toString(), "--state-dir", dir.resolve("state").toString(), "--json");
        assertThat(b.exit()).as("%s", b).isZero();
    }

    @AfterEach
    void stop() {
        server.close();
        LeakWatch.assertNoLeaks();
    }

    AgentRun restore(Path target, String... extra) {
        List<String> a = new ArrayList<>(List.of("restore", "--server", server.address(), "--no-tls", "--volume", "vm1",
                "--snapshot", "latest", "--target", target.toString()));
        a.addAll(List.of(extra));
        return AgentRun.of(a.toArray(String[]::new));
    }

    @Test
    void restore_existingNonEmptyFileWithoutForce_usageExitAndFileUntouched() throws Exception {
        Path target = Files.writeString(dir.resolve("precious.img"), "the only copy");
        AgentRun r = restore(target);
        assertThat(r.exit()).as("%s", r).isEqualTo(2);
        assertThat(r.stderr()).contains("exists and is not empty").contains("--force").doesNotContain("Exception");
        assertThat(Files.readString(target)).isEqualTo("the only copy");
        AgentRun offline = AgentRun.of("restore", "--server", "127.0.0.1:1", "--no-tls", "--volume", "vm1",
                "--snapshot", "latest", "--target", target.toString());
        assertThat(offline.exit()).as("refused before connecting: %s", offline).isEqualTo(2);
    }

    /** Restores into {@code target} (mode {@code before} if it exists) and checks the bytes and the mode after. */
    private void assertRestoredWithMode(Path target, String before, String after, String... extra) throws Exception {
        if (before != null) {
            Files.setPosixFilePermissions(target, PosixFilePermissions.fromString(before));
        }
        AgentRun r = restore(target, extra);
        assertThat(r.exit()).as("%s", r).isZero();
        assertThat(Images.sameContent(image, target)).isTrue();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(target))).isEqualTo(after);
    }

    @Test
    void restore_existingFileWithForce_replacedAndModeKept() throws Exception {
        assertRestoredWithMode(Files.writeString(dir.resolve("old.img"), "old"), "rw-r-----", "rw-r-----", "--force");
    }

    @Test
    void restore_newFile_createdWithMode0600() throws Exception {
        assertRestoredWithMode(dir.resolve("new.img"), null, "rw-------");
    }

    @Test
    void restore_emptyExistingFile_filledWithoutForceKeepingItsMode() throws Exception {
        assertRestoredWithMode(Files.createFile(dir.resolve("empty.img")), "rw-rw-r--", "rw-rw-r--");
    }

    @Test
    void restore_targetInUnwritableSysfs_permissionDeniedExplainedExit5() throws Exception {
        // sysfs refuses new files even to root: a real EACCES wherever the tests run
        Path target = Path.of("/sys/holdfast-restore-test.img");
        AgentRun r = restore(target);
        assertThat(r.exit()).as("%s", r).isEqualTo(5);
        assertThat(r.stderr()).contains("cannot open target " + target + ": permission denied")
                .contains("check the permissions of " + target).doesNotContain("Exception");
    }
}
