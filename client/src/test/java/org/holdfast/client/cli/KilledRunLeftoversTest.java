package org.holdfast.client.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.holdfast.client.AgentRun;
import org.holdfast.client.FakeServer;
import org.holdfast.client.Images;
import org.holdfast.client.LeakWatch;
import org.holdfast.client.LiveTempFileHolder;
import org.holdfast.client.scan.StateFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a SIGKILLed backup or restore left behind goes at the next backup of that volume or
 * restore to that target, which then succeeds; another volume's, another target's and a live
 * run's files stay.
 */
class KilledRunLeftoversTest {
    static final int BS = 4096;
    static final long SIZE = 256 * 1024;

    @TempDir
    Path dir;
    FakeServer server;
    Path image;
    Path state;

    @BeforeEach
    void start() throws Exception {
        server = new FakeServer();
        image = Images.create(dir.resolve("vol.img"), SIZE, BS, 3, 5);
        state = dir.resolve("state");
    }

    @AfterEach
    void stop() {
        server.close();
        LeakWatch.assertNoLeaks();
    }

    AgentRun backup() {
        return AgentRun.of("backup", "--server", server.address(), "--no-tls", "--volume", "vm1", "--source", image.toString(),
                "--state-dir", state.toString(), "--json");
    }

    AgentRun restore(Path target) {
        return AgentRun.of("restore", "--server", server.address(), "--no-tls", "--volume", "vm1", "--snapshot", "latest",
                "--target", target.toString(), "--force", "--json");
    }

    Path stateFile() {
        return StateFile.path(state, "127.0.0.1_" + server.address().split(":")[1], "vm1");
    }

    /** A file as a killed run leaves it: written, unlocked, no longer new. */
    static Path leftover(Path file, int bytes) throws Exception {
        Files.createDirectories(file.getParent());
        Files.write(file, new byte[bytes]);
        Files.setLastModifiedTime(file, FileTime.from(Instant.now().minusSeconds(600)));
        return file;
    }

    @Test
    void backup_leftoverStateOfAKilledBackup_removedAndTheBackupSucceeds() throws Exception {
        Path sd = stateFile().getParent();
        Path killed = leftover(sd.resolve("vm1.state.4242.tmp"), 48 * 64);
        List<Path> others = new ArrayList<>(List.of(leftover(sd.resolve("vm2.state.4242.tmp"), 100),
                leftover(sd.resolve("vm1.state.4242.tmp.keep"), 100), leftover(sd.resolve(".vol.img.1.holdfast-restore"), 100)));
        LiveTempFileHolder.Held live = LiveTempFileHolder.start(sd, "vm1.state.", ".tmp", 4800);
        AgentRun r;
        try {
            r = backup();
            assertThat(live.file()).as("a concurrent live run's state file").exists().hasSize(4800);
        } finally {
            live.kill();
        }

        assertThat(r.exit()).as("%s", r).isZero();
        assertThat(r.json().get("stateSaved").asBoolean()).isTrue();
        assertThat(killed).doesNotExist();
        assertThat(r.stderr()).contains("removed " + killed + " (3.0 KiB), left by a backup of volume vm1");
        assertThat(r.stderr().lines().filter(l -> l.contains("removed "))).hasSize(1);
        assertThat(others).allSatisfy(p -> assertThat(p).exists());
        assertThat(stateFile()).exists();

        AgentRun next = backup(); // now the killed live run's file is a leftover too
        assertThat(next.exit()).as("%s", next).isZero();
        assertThat(live.file()).doesNotExist();
        assertThat(others).allSatisfy(p -> assertThat(p).exists());
    }

    @Test
    void restore_hiddenLeftoverOfAKilledRestore_removedAndTheRestoreSucceeds() throws Exception {
        assertThat(backup().exit()).isZero();
        Path target = dir.resolve("out").resolve("vm.img");
        Path killed = leftover(target.resolveSibling(".vm.img.977.holdfast-restore"), 128 * 1024);
        Path otherTarget = leftover(target.resolveSibling(".vm.img2.977.holdfast-restore"), 100);
        Path notOurs = leftover(target.resolveSibling(".vm.img.977.holdfast-restore.part"), 100);

        AgentRun r = restore(target);

        assertThat(r.exit()).as("%s", r).isZero();
        assertThat(Images.sameContent(image, target)).isTrue();
        assertThat(killed).doesNotExist();
        assertThat(r.stderr()).contains("removed " + killed.toAbsolutePath() + " (128.0 KiB), left by a restore to " + target);
        assertThat(otherTarget).exists();
        assertThat(notOurs).exists();
    }
}
