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

/** An agent SIGKILLed in the middle of a backup leaves no trace but reusable blocks. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AgentKillTest {
    private static final int BLOCK = 4096;
    private static final int MIB = 1 << 20;
    private static final long KILL_AFTER_STORED = 20L * MIB;

    private final LogDir logs = new LogDir("AgentKillTest");
    private final AgentProcess agent = new AgentProcess(logs);
    private ServerProcess server;
    private Path work;

    @BeforeAll
    void startServer(@TempDir Path dir) {
        work = dir;
        server = ServerProcess.start(dir.resolve("server"), "exact", logs);
    }

    @AfterAll
    void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    record Committed(String id, Path expected) {
    }

    @Test
    void backup_agentKilledMidway_noPartialSnapshotAndNextBackupSucceeds() throws Exception {
        String volume = "agent-killed";
        Path source = work.resolve("volume.img");
        Path state = Files.createDirectories(work.resolve("state"));
        List<Committed> committed = new ArrayList<>();
        RestoreCheck restores = new RestoreCheck(agent, work);

        VolumeImage img = VolumeImage.generate(31, 48 * MIB);
        img.fill(0, 40 * MIB, Content.RANDOM);
        BackupSummary first = backup(volume, img, source, state, committed);
        long fullMillis = first.run().elapsed().toMillis();

        // Rewrite most of the volume so that the next backup is as long as the first, and kill the
        // agent once the server has stored half of it (its data logs grow as blocks arrive). The
        // server keeps findable the blocks of every input segment (at most 4096 entries by
        // default) that was complete at the disconnect: 20 MiB stored holds at least one.
        boolean caughtMidway = false;
        long grown = 0;
        String killReport = "";
        for (int attempt = 1; attempt <= 4 && !caughtMidway; attempt++) {
            img.fill(0, 40 * MIB, Content.RANDOM);
            img.writeTo(source);
            long dataBefore = server.dataLogBytes();
            AgentProcess.Running run = agent.start(AgentProcess.backupArgs(server, volume, source, state,
                    "--block-size", String.valueOf(BLOCK)));
            long start = System.nanoTime();
            grown = 0;
            while (run.isAlive() && grown < KILL_AFTER_STORED && (System.nanoTime() - start) / 1_000_000 < 4 * fullMillis) {
                Thread.sleep(5);
                grown = server.dataLogBytes() - dataBefore;
            }
            long at = (System.nanoTime() - start) / 1_000_000;
            boolean bySignal = run.kill();
            AgentResult r = run.await();
            caughtMidway = bySignal && grown >= KILL_AFTER_STORED;
            killReport = String.format("attempt %d: kill at %d ms (first full backup took %d ms), server data grew"
                    + " %d B before it, killed by the signal: %s", attempt, at, fullMillis, grown, bySignal);
            System.out.println("[e2e] agent kill " + killReport);
            if (bySignal && !r.stdout().isBlank()) {
                // Killed while exiting, after COMMITTED: the snapshot is there, like any other.
                caughtMidway = false;
                bySignal = false;
                r = new AgentResult(r.args(), 0, r.stdout(), r.stderr(), r.elapsed());
            }
            if (!bySignal) {
                // It finished first: a committed snapshot like any other; try again.
                assertThat(r.exitCode()).as("%s", r).isZero();
                Path expected = work.resolve("expected-" + (committed.size() + 1) + ".img");
                Files.copy(source, expected);
                committed.add(new Committed(BackupSummary.parse(r).snapshotId(), expected));
            } else {
                // Killed after the server committed but before the agent printed its summary (a loaded
                // machine): the snapshot must then be complete. Record it; the restores below check
                // it byte for byte, so a partial snapshot still fails the test.
                List<String> ids = agent.snapshots(server, volume).stream().map(SnapshotInfo::id).toList();
                if (ids.size() > committed.size()) {
                    assertThat(ids).as("one snapshot at most appears per backup").hasSize(committed.size() + 1);
                    Path expected = work.resolve("expected-" + (committed.size() + 1) + ".img");
                    Files.copy(source, expected);
                    committed.add(new Committed(ids.get(ids.size() - 1), expected));
                    caughtMidway = false;
                    killReport += " (the server had committed it: kept and checked as a complete snapshot)";
                    System.out.println("[e2e] agent kill attempt " + attempt + " came after the commit");
                }
            }
        }
        assertThat(caughtMidway).as("the agent was never caught mid-upload: %s", killReport).isTrue();

        // the agent protocol's listing over one connection here; the agent's own listing is checked at the end
        assertThat(WireProbe.snapshotIds(server, volume))
                .as("no partial snapshot after the kill")
                .containsExactlyElementsOf(committed.stream().map(Committed::id).toList());

        // The next backup of the same content succeeds, from the same state directory.
        BackupSummary next = backupWhenVolumeFree(volume, img, source, state, committed);
        System.out.println("[e2e] backup after the kill: " + next);
        assertThat(next.sentBlocks())
                .as("blocks of complete segments stored before the kill (%d B of data) are not uploaded again: %s", grown, next)
                .isLessThan(next.changedBlocks());

        assertThat(agent.snapshots(server, volume)).extracting(SnapshotInfo::id)
                .containsExactlyElementsOf(committed.stream().map(Committed::id).toList());
        // every snapshot over the wire (one connection, each block checked against its fingerprint); the agent itself
        // restores the newest: an agent JVM per snapshot proved nothing the probe does not
        Map<String, Path> expected = new LinkedHashMap<>();
        committed.forEach(c -> expected.put(c.id(), c.expected()));
        RestoreCheck.assertRestoreOverTheWire(server, volume, expected);
        Committed newest = committed.get(committed.size() - 1);
        restores.assertRestores(server, volume, newest.id(), newest.expected(), BLOCK);
    }

    private BackupSummary backup(String volume, VolumeImage img, Path source, Path state, List<Committed> committed)
            throws Exception {
        img.writeTo(source);
        BackupSummary s = agent.backup(server, volume, source, state, "--block-size", String.valueOf(BLOCK));
        Path expected = work.resolve("expected-" + (committed.size() + 1) + ".img");
        Files.copy(source, expected);
        committed.add(new Committed(s.snapshotId(), expected));
        return s;
    }

    /**
     * The killed agent's connection is closed by the kernel at once, but the server may notice it
     * a moment later; a VOLUME_BUSY answer within the first seconds is retried (and reported).
     */
    private BackupSummary backupWhenVolumeFree(String volume, VolumeImage img, Path source, Path state,
                                               List<Committed> committed) throws Exception {
        img.writeTo(source);
        AgentResult r = null;
        for (int i = 0; i < 10; i++) {
            r = agent.run(AgentProcess.backupArgs(server, volume, source, state, "--block-size", String.valueOf(BLOCK)));
            if (r.succeeded() || !r.stderr().toLowerCase().contains("busy")) {
                break;
            }
            System.out.println("[e2e] volume still busy after the agent kill, retry " + (i + 1));
            Thread.sleep(500);
        }
        assertThat(r.exitCode()).as("backup after the agent was killed:\n%s\n%s", r, server.diagnostics()).isZero();
        BackupSummary s = BackupSummary.parse(r);
        Path expected = work.resolve("expected-" + (committed.size() + 1) + ".img");
        Files.copy(source, expected);
        committed.add(new Committed(s.snapshotId(), expected));
        return s;
    }
}
