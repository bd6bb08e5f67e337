package org.holdfast.client.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.holdfast.client.AgentRun;
import org.holdfast.client.FakeServer;
import org.holdfast.client.Images;
import org.holdfast.client.LeakWatch;
import org.holdfast.client.scan.StateFile;
import org.holdfast.common.protocol.BackupMode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent's half of the snapshot identity (protocol 5): it keeps COMMITTED's id in its state file
 * and sends it back in BACKUP_BEGIN, so that after a catalog restore, when another agent got the
 * sequence its state describes, it backs up in full instead of sending its changes against a
 * snapshot that is not its own.
 */
class SnapshotIdentityTest {
    static final int BS = 4096;
    static final long SIZE = 64L * BS;

    @TempDir
    Path dir;
    FakeServer server;
    Path imageA;

    @BeforeEach
    void start() throws Exception {
        server = new FakeServer();
        server.protocolVersion = 5;
        imageA = Images.create(dir.resolve("a.img"), SIZE, BS, 1, 7);
    }

    @AfterEach
    void stop() {
        server.close();
        LeakWatch.assertNoLeaks();
    }

    private AgentRun backup(Path image, String stateDir) {
        List<String> a = new ArrayList<>(List.of("backup", "--server", server.address(), "--no-tls", "--volume", "vm1",
                "--source", image.toString(), "--state-dir", dir.resolve(stateDir).toString(), "--json"));
        AgentRun r = AgentRun.of(a.toArray(String[]::new));
        assertThat(r.exit()).as("%s", r).isZero();
        return r;
    }

    private long stateId(String stateDir) {
        StateFile.Loaded l = StateFile.load(StateFile.path(dir.resolve(stateDir), "127.0.0.1_" + server.address().split(":")[1], "vm1"));
        assertThat(l.trusted()).as(l.reason()).isTrue();
        try (StateFile.PreviousState s = l.state()) {
            return s.snapshotId();
        }
    }

    @Test
    void backup_version5Server_stateKeepsTheCommittedId_andTheNextBeginSendsIt() throws Exception {
        backup(imageA, "state-a");
        long first = server.snapshotIds.get("vm1@1");
        assertThat(stateId("state-a")).isNotZero().isEqualTo(first);
        Images.overwrite(imageA, 3, BS, 33);
        AgentRun r = backup(imageA, "state-a");
        assertThat(r.json().get("mode").asText()).isEqualTo("incremental");
        assertThat(server.sessions.get(1).baseSnapshotId).isEqualTo(first);
        assertThat(stateId("state-a")).isEqualTo(server.snapshotIds.get("vm1@2")).isNotEqualTo(first);
    }

    @Test
    void backup_version4Server_noIdKeptOrSent_incrementalByTheSequence() throws Exception {
        server.protocolVersion = 4; // its decoder refuses an id; the agent must not send one
        backup(imageA, "state-a");
        assertThat(stateId("state-a")).isZero();
        Images.overwrite(imageA, 3, BS, 33);
        AgentRun r = backup(imageA, "state-a");
        assertThat(r.json().get("mode").asText()).isEqualTo("incremental");
        assertThat(server.sessions.get(1).baseSnapshotId).isZero();
    }

    @Test
    void backup_afterCatalogRestoreAnotherAgentGotTheStatesSequence_fullAndRestoresByteIdentical() throws Exception {
        backup(imageA, "state-a");
        Images.overwrite(imageA, 3, BS, 33);
        backup(imageA, "state-a"); // vm1@2, the state of agent A
        server.rollBack("vm1", 1); // the catalog restore: vm1@2 is lost and its sequence free again
        Path imageB = Images.create(dir.resolve("b.img"), SIZE, BS, 2, 5);
        backup(imageB, "state-b"); // agent B, another state dir: vm1@2 again, another snapshot
        assertThat(server.snapshots("vm1")).extracting(FakeServer.Snap::sequence).containsExactly(1L, 2L);

        Images.overwrite(imageA, 9, BS, 99);
        AgentRun r = backup(imageA, "state-a");
        assertThat(server.sessions.get(3).base).isEqualTo(2);

        Path target = dir.resolve("restored.img");
        AgentRun rr = AgentRun.of("restore", "--server", server.address(), "--no-tls", "--volume", "vm1", "--snapshot", "latest",
                "--target", target.toString(), "--json");
        assertThat(rr.exit()).as("%s", rr).isZero();
        assertThat(Images.sameContent(imageA, target)).as("vm1@3 is agent A's volume").isTrue();
        assertThat(server.sessions.get(3).mode).isEqualTo(BackupMode.FULL);
        assertThat(r.json().get("mode").asText()).isEqualTo("full");
        assertThat(r.json().get("fullReason").asText()).contains("not the one the state file describes");
    }
}
