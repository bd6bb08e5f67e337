package org.holdfast.client.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.holdfast.client.AgentRun;
import org.holdfast.client.FakeServer;
import org.holdfast.client.Images;
import org.holdfast.client.LeakWatch;
import org.holdfast.client.scan.StateFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What the agent says when the server goes away mid-backup without a word (stopped, killed), and when
 * it refuses a HELLO that carried no token: what happened and what to do, never a Java exception's name.
 */
class ServerHangUpTest {
    private static final int BS = 4096;

    @TempDir
    Path dir;
    FakeServer server;
    Path image;
    Path state;

    @BeforeEach
    void start() throws Exception {
        server = new FakeServer();
        image = Images.create(dir.resolve("vol.img"), 4L << 20, BS, 3, 0); // no zero blocks: every block is sent
        state = dir.resolve("state");
    }

    @AfterEach
    void stop() {
        server.close();
        LeakWatch.assertNoLeaks();
    }

    private AgentRun backup(String... extra) {
        List<String> a = new ArrayList<>(List.of("backup", "--server", server.address(), "--no-tls", "--no-daemon",
                "--volume", "vm1", "--source", image.toString(), "--state-dir", state.toString()));
        a.addAll(List.of(extra));
        return AgentRun.of(a.toArray(String[]::new));
    }

    /** {@code reset}: the server's kernel resets the connection (a killed server with data unread), else closes it. */
    @ParameterizedTest(name = "reset {0}")
    @ValueSource(booleans = {false, true})
    void backup_serverClosesConnectionMidUpload_exit3SaysWhatHappenedNothingCommittedRetryWorks(boolean reset) throws Exception {
        assertThat(backup().exit()).isZero();
        Path stateFile = StateFile.path(state, "127.0.0.1_" + server.address().split(":")[1], "vm1");
        byte[] stateBefore = Files.readAllBytes(stateFile);
        for (long lbn = 0; lbn < 1024; lbn += 2) {
            Images.overwrite(image, lbn, BS, 100 + lbn);
        }
        server.hangUpOnBlocks = true;
        server.hangUpWithReset = reset;
        AgentRun r = backup();
        assertThat(r.exit()).as("%s", r).isEqualTo(3);
        assertThat(r.stderr()).isEqualTo("holdfast-agent: error: the connection to the server " + server.address()
                + " closed during the backup (did the server stop or restart?); nothing of this backup was committed"
                + " (run the backup again once the server is up: blocks it already stored are not sent again)\n");
        assertThat(r.stderr()).doesNotContain("Exception", "java.", "Broken pipe", "reset");
        assertThat(server.snapshots("vm1")).hasSize(1);
        assertThat(Files.readAllBytes(stateFile)).as("state unchanged").isEqualTo(stateBefore);

        server.hangUpOnBlocks = false;
        AgentRun again = backup("--json");
        assertThat(again.exit()).as("%s", again).isZero();
        assertThat(again.json().get("mode").asText()).isEqualTo("incremental");
        Path target = dir.resolve("r.img");
        AgentRun restored = AgentRun.of("restore", "--server", server.address(), "--no-tls", "--no-daemon", "--volume", "vm1",
                "--snapshot", "latest", "--target", target.toString());
        assertThat(restored.exit()).as("%s", restored).isZero();
        assertThat(Images.sameContent(image, target)).isTrue();
    }

    @Test
    void backup_noTokenServerNeedsOne_hintSaysHowToGiveOneNotToCheckIt() {
        server.tokenRequired = "token refused: no API token: the agent sent none, and this server needs one";
        AgentRun r = backup();
        assertThat(r.exit()).as("%s", r).isEqualTo(4);
        assertThat(r.stderr()).isEqualTo("holdfast-agent: error: server refused: UNAUTHORIZED: " + server.tokenRequired
                + " (" + ConnectionOptions.NO_TOKEN_HINT + ")\n");
        assertThat(r.stderr()).doesNotContain("check the token the agent used");
        assertThat(server.snapshots("vm1")).isEmpty();
    }
}
