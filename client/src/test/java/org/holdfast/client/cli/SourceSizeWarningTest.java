package org.holdfast.client.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;
import org.holdfast.client.AgentRun;
import org.holdfast.client.FakeServer;
import org.holdfast.client.Images;
import org.holdfast.client.LeakWatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A backup from a source of another size than the volume's last snapshot says so (a wrong --source?) and still commits. */
class SourceSizeWarningTest {
    static final int BS = 4096;

    @TempDir
    Path dir;
    FakeServer server;

    @BeforeEach
    void start() throws Exception {
        server = new FakeServer();
    }

    @AfterEach
    void stop() {
        server.close();
        LeakWatch.assertNoLeaks();
    }

    AgentRun backup(Path source, String... json) {
        return AgentRun.of("backup", "--server", server.address(), "--no-tls", "--volume", "vol2", "--source", source.toString(),
                "--state-dir", dir.resolve("state").toString(), json.length > 0 ? json[0] : "--block-size=4096");
    }

    @Test
    void backup_sourceOfAnotherSize_warnsWithBothSizesAndCommits_sameSize_doesNot() throws Exception {
        Path vol2 = Images.create(dir.resolve("vol2.img"), 64 * 1024, BS, 1, 9);
        Path vol1 = Images.create(dir.resolve("vol1.img"), 96 * 1024, BS, 2, 9);
        AgentRun first = backup(vol2, "--json");
        assertThat(first.exit()).as("%s", first).isZero();
        assertThat(first.stderr()).doesNotContain("warning");
        assertThat(first.json().get("sizeChange").isNull()).isTrue();

        AgentRun wrong = backup(vol1, "--json");

        assertThat(wrong.exit()).as("a resize is legitimate: %s", wrong).isZero();
        assertThat(wrong.stderr()).contains("warning: volume vol2 was 64.0 KiB at snapshot vol2@1, the source " + vol1
                + " is 96.0 KiB: if this is the wrong source, delete snapshot vol2@2");
        JsonNode change = wrong.json().get("sizeChange");
        assertThat(change.get("fromSequence").asLong()).isEqualTo(1);
        assertThat(change.get("fromBytes").asLong()).isEqualTo(64 * 1024);
        assertThat(change.get("toBytes").asLong()).isEqualTo(96 * 1024);
        assertThat(server.snapshots("vol2")).hasSize(2);

        AgentRun same = backup(vol1); // text output this time
        assertThat(same.exit()).as("%s", same).isZero();
        assertThat(same.stdout()).contains("snapshot vol2@3 committed");
        assertThat(same.stderr()).doesNotContain("warning");
    }

    @Test
    void backup_stateFileDescribesAnOlderSnapshot_noWarningFromItsStaleSize() throws Exception {
        Path small = Images.create(dir.resolve("small.img"), 64 * 1024, BS, 1, 9);
        Path large = Images.create(dir.resolve("large.img"), 96 * 1024, BS, 2, 9);
        assertThat(backup(small, "--json").exit()).isZero();
        server.commitForeignSnapshot("vol2"); // another agent made vol2@2: the state file does not know its size

        AgentRun r = backup(large, "--json");

        assertThat(r.exit()).as("%s", r).isZero();
        assertThat(r.stderr()).doesNotContain("warning");
        assertThat(r.json().get("sizeChange").isNull()).isTrue();
    }
}
