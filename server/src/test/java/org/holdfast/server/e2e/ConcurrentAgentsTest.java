package org.holdfast.server.e2e;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.holdfast.server.e2e.VolumeImage.Content;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/** Several agent processes backing up at the same time against one server. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ConcurrentAgentsTest {
    private static final int BLOCK = 4096;
    private static final int MIB = 1 << 20;
    private static final int AGENTS = 4;

    private final LogDir logs = new LogDir("ConcurrentAgentsTest");
    private final AgentProcess agent = new AgentProcess(logs);
    private ServerProcess server;
    private Path work;
    private RestoreCheck restores;

    @BeforeAll
    void startServer(@TempDir Path dir) {
        work = dir;
        server = ServerProcess.start(dir.resolve("server"), "exact", logs);
        restores = new RestoreCheck(agent, dir);
    }

    @AfterAll
    void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void backup_fourAgentsOnDifferentVolumesAtOnce_allCommitAndRestore() throws Exception {
        List<VolumeImage> images = new ArrayList<>();
        List<Path> states = new ArrayList<>();
        List<List<String>> ids = new ArrayList<>();
        List<List<Path>> expected = new ArrayList<>();
        VolumeImage common = VolumeImage.generate(60, 6 * MIB);
        for (int v = 0; v < AGENTS; v++) {
            // Half of each volume is the same content, so concurrent sessions dedup against each other.
            images.add(common.copy(61 + v).fill(3 * MIB, 3 * MIB, Content.RANDOM));
            states.add(Files.createDirectories(work.resolve("state-" + v)));
            ids.add(new ArrayList<>());
            expected.add(new ArrayList<>());
        }
        for (int round = 0; round < 2; round++) {
            List<AgentProcess.Running> runs = new ArrayList<>();
            List<Path> files = new ArrayList<>();
            for (int v = 0; v < AGENTS; v++) {
                if (round > 0) {
                    images.get(v).fill(images.get(v).randomOffset(MIB, BLOCK), MIB, Content.RANDOM).scribble(10);
                }
                Path file = images.get(v).writeTo(work.resolve("vol-" + v + "-" + round + ".img"));
                files.add(file);
                runs.add(agent.start(AgentProcess.backupArgs(server, "concurrent-" + v, file, states.get(v),
                        "--block-size", String.valueOf(BLOCK))));
            }
            for (int v = 0; v < AGENTS; v++) {
                AgentResult r = runs.get(v).await();
                assertThat(r.exitCode()).as("round %d, agent %d:\n%s\n%s", round, v, r, server.diagnostics()).isZero();
                ids.get(v).add(BackupSummary.parse(r).snapshotId());
                expected.get(v).add(files.get(v));
            }
        }
        // listed and restored bit for bit over the agent protocol, one connection per volume (no JVM per snapshot);
        // the agent itself restores one
        for (int v = 0; v < AGENTS; v++) {
            String volume = "concurrent-" + v;
            assertThat(WireProbe.snapshotIds(server, volume)).containsExactlyElementsOf(ids.get(v));
            Map<String, Path> snapshots = new LinkedHashMap<>();
            for (int i = 0; i < ids.get(v).size(); i++) {
                snapshots.put(ids.get(v).get(i), expected.get(v).get(i));
            }
            RestoreCheck.assertRestoreOverTheWire(server, volume, snapshots);
        }
        restores.assertRestores(server, "concurrent-0", ids.get(0).get(1), expected.get(0).get(1), BLOCK);
    }

    @Test
    void backup_twoAgentsOnTheSameVolumeAtOnce_eachCommitsWholeOrIsRefusedClearly() throws Exception {
        String volume = "contended";
        VolumeImage base = VolumeImage.generate(70, 8 * MIB);
        List<Path> files = List.of(
                base.copy(71).fill(0, 4 * MIB, Content.RANDOM).writeTo(work.resolve("contended-0.img")),
                base.copy(72).fill(4 * MIB, 4 * MIB, Content.RANDOM).writeTo(work.resolve("contended-1.img")));
        List<AgentProcess.Running> runs = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            runs.add(agent.start(AgentProcess.backupArgs(server, volume, files.get(i),
                    Files.createDirectories(work.resolve("state-contended-" + i)), "--block-size", String.valueOf(BLOCK))));
        }
        List<String> committed = new ArrayList<>();
        List<Path> committedFiles = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            AgentResult r = runs.get(i).await();
            if (r.succeeded()) {
                committed.add(BackupSummary.parse(r).snapshotId());
                committedFiles.add(files.get(i));
            } else {
                // The loser of the race is told so in one line (VOLUME_BUSY), and leaves nothing.
                assertThat(r.stderrLines()).as("%s", r).hasSize(1);
                assertThat(r.stderrLines().get(0).toLowerCase()).as("%s", r).contains("busy");
            }
        }
        assertThat(committed).as("at least one of two racing backups commits").isNotEmpty();
        assertThat(agent.snapshots(server, volume)).extracting(SnapshotInfo::id)
                .containsExactlyInAnyOrderElementsOf(committed);
        for (int i = 0; i < committed.size(); i++) {
            restores.assertRestores(server, volume, committed.get(i), committedFiles.get(i), BLOCK);
        }
    }
}
