package org.holdfast.client.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import org.holdfast.client.AgentRun;
import org.holdfast.client.FakeServer;
import org.holdfast.client.Images;
import org.holdfast.client.LeakWatch;
import org.holdfast.common.protocol.ProtocolLimits;
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
        assertThat(first.stderr()).doesNotContain("warning").as("a new volume's first backup").doesNotContain("reading the whole");
        assertThat(first.json().get("sizeChange").isNull()).isTrue();

        AgentRun wrong = backup(vol1, "--json");

        assertThat(wrong.exit()).as("a resize is legitimate: %s", wrong).isZero();
        assertThat(wrong.stderr()).contains("warning: volume vol2 was 64.0 KiB at snapshot vol2@1, the source " + vol1
                + " is 96.0 KiB: if this is the wrong source, delete snapshot vol2@2");
        assertThat(wrong.stderr()).contains("reading the whole volume (full backup): volume size changed from 64.0 KiB to 96.0 KiB"
                + " (65536 to 98304 bytes)");
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
    void backup_stateFileDescribesAnOlderSnapshot_comparesWithTheServersSizeOfTheParent() throws Exception {
        Path small = Images.create(dir.resolve("small.img"), 64 * 1024, BS, 1, 9);
        Path large = Images.create(dir.resolve("large.img"), 96 * 1024, BS, 2, 9);
        assertThat(backup(small, "--json").exit()).isZero();
        server.commitForeignSnapshot("vol2", 96 * 1024); // another agent made vol2@2 at the new size

        AgentRun resized = backup(large, "--json");

        assertThat(resized.exit()).as("%s", resized).isZero();
        assertThat(resized.stderr()).as("the state's 64 KiB is stale: vol2@2 is 96 KiB").doesNotContain("warning");
        assertThat(resized.json().get("sizeChange").isNull()).isTrue();

        server.commitForeignSnapshot("vol2", 64 * 1024); // vol2@4, again behind this agent's back
        AgentRun shrunk = backup(small, "--json"); // the state (vol2@3, 96 KiB) would say "shrunk": the server says "same"
        assertThat(shrunk.exit()).as("%s", shrunk).isZero();
        assertThat(shrunk.stderr()).doesNotContain("warning");

        server.commitForeignSnapshot("vol2", 64 * 1024); // vol2@6
        AgentRun grown = backup(large, "--json");
        assertThat(grown.stderr()).contains("warning: volume vol2 was 64.0 KiB at snapshot vol2@6");
        assertThat(grown.json().get("sizeChange").get("fromSequence").asLong()).isEqualTo(6);
    }

    @Test
    void backup_noStateFile_warnsFromTheServersList_atEveryProtocolVersion() throws Exception {
        Path vol2 = Images.create(dir.resolve("vol2.img"), 64 * 1024, BS, 1, 9);
        Path vol1 = Images.create(dir.resolve("vol1.img"), 96 * 1024, BS, 2, 9);
        assertThat(backup(vol2).exit()).isZero();
        long sequence = 1;
        for (int version = ProtocolLimits.MIN_PROTOCOL_VERSION; version <= ProtocolLimits.PROTOCOL_VERSION; version++) {
            server.protocolVersion = version;
            deleteState(); // a new host, or a wiped --state-dir

            AgentRun same = backup(vol2, "--json");
            assertThat(same.exit()).as("%s", same).isZero();
            assertThat(same.stderr()).as("version %d", version).doesNotContain("warning");
            assertThat(same.stderr()).as("a wiped state is said").contains("reading the whole volume (full backup): no state file"
                    + " for this volume and server (").contains("); the server's newest snapshot is vol2@" + sequence);
            assertThat(same.json().get("sizeChange").isNull()).isTrue();
            sequence++;

            deleteState();
            AgentRun wrong = backup(vol1, "--json");
            sequence++;
            assertThat(wrong.exit()).as("%s", wrong).isZero();
            assertThat(wrong.stderr()).as("version %d", version).contains("warning: volume vol2 was 64.0 KiB at snapshot vol2@"
                    + (sequence - 1) + ", the source " + vol1 + " is 96.0 KiB: if this is the wrong source, delete snapshot vol2@" + sequence);
            assertThat(wrong.json().get("sizeChange").get("fromBytes").asLong()).isEqualTo(64 * 1024);

            deleteState();
            assertThat(backup(vol2).exit()).isZero(); // back to 64 KiB for the next version (warns, not asserted here)
            sequence++;
        }
        assertThat(server.snapshots("vol2")).hasSize((int) sequence);
    }

    @Test
    void backup_noStateFileAndTheListingFails_committedWithoutWarning() throws Exception {
        Path vol2 = Images.create(dir.resolve("vol2.img"), 64 * 1024, BS, 1, 9);
        Path vol1 = Images.create(dir.resolve("vol1.img"), 96 * 1024, BS, 2, 9);
        assertThat(backup(vol2).exit()).isZero();
        deleteState();
        server.listRefusal = "listing refused for the test";

        AgentRun r = backup(vol1, "--json");

        assertThat(r.exit()).as("the snapshot is committed: %s", r).isZero();
        assertThat(r.stderr()).doesNotContain("warning:").contains("could not compare the source's size with snapshot vol2@1")
                .contains("listing refused for the test");
        assertThat(r.json().get("sizeChange").isNull()).isTrue();
        assertThat(server.snapshots("vol2")).hasSize(2);
    }

    void deleteState() throws Exception {
        try (var files = Files.walk(dir.resolve("state"))) {
            for (Path p : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
