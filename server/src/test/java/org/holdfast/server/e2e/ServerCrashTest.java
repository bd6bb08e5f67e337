package org.holdfast.server.e2e;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.holdfast.common.kill.KillPoints;
import org.holdfast.server.e2e.VolumeImage.Content;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Kills the server with SIGKILL at random moments of a backup, again and again, restarting it on
 * the same data directory each time. After every restart: no partial snapshot, every committed
 * snapshot restores bit for bit, and the next backup succeeds. Every third iteration (2, 5, ...) the
 * server instead halts itself at the named kill point {@code commit.afterCatalogBatch} (armed at the
 * restart before, see {@link CrashLoop}): the in-flight snapshot must then be there after the restart.
 *
 * <p>Iterations come from {@code holdfast.crash.iterations} (3 by default, 100 with -Pslow); the
 * seed of the kill delays from {@code holdfast.crash.seed} (printed, so a failure can be replayed).
 */
class ServerCrashTest {
    private static final int BLOCK = 4096;
    private static final int MIB = 1 << 20;
    /** Up to this many snapshots every one is restored after every restart; beyond, a sample (and all at the end). */
    private static final int FULL_CHECK_LIMIT = 16;

    private final LogDir logs = new LogDir("ServerCrashTest");
    private final AgentProcess agent = new AgentProcess(logs);

    @TempDir
    Path work;

    @Test
    void server_killedDuringBackupsRepeatedly_committedSnapshotsSurviveAndNoPartialOneAppears() throws Exception {
        CrashLoop loop = new CrashLoop("server crash loop", 3);
        int iterations = loop.iterations();
        long seed = loop.seed();
        Random random = loop.random();
        String volume = "crashing";
        Path source = work.resolve("volume.img");
        Path state = Files.createDirectories(work.resolve("state"));
        RestoreCheck restores = new RestoreCheck(agent, work);
        Map<String, Path> committed = new LinkedHashMap<>();
        int killedWhileAgentRan = 0;
        int inFlightCommitted = 0;

        try (ServerProcess server = ServerProcess.start(work.resolve("server"), "exact", logs)) {
            VolumeImage img = VolumeImage.generate(seed, 16 * MIB);
            backup(server, volume, img, source, state, committed);

            for (int it = 1; it <= iterations; it++) {
                // A change big enough that the backup takes a while: a quarter of the volume rewritten.
                VolumeImage previousImage = img.copy(it);
                for (int i = 0; i < 4; i++) {
                    img.fill(img.randomOffset(MIB, BLOCK), MIB, Content.RANDOM);
                }
                img.scribble(20);
                long changeBytes = img.changedBlockRange(previousImage, BLOCK)[0] * BLOCK;
                img.writeTo(source);
                Path inFlight = work.resolve("expected-inflight-" + it + ".img");
                Files.copy(source, inFlight);
                List<String> before = new ArrayList<>(committed.keySet());

                // Aim the kill around the commit: wait until a random share (10 % to 100 %) of the
                // change has reached the server's data logs, then a random 0-200 ms more. Some kills
                // land during the upload, some during the commit, some just after it. Or, in the
                // iterations the server was started with commit.afterCatalogBatch armed (see below),
                // it halts itself the moment this backup's commit batch is durable.
                boolean atPoint = pointIteration(it);
                double share = 0.1 + 0.9 * random.nextDouble();
                long extraMillis = random.nextInt(200);
                long dataBefore = server.dataLogBytes();
                AgentProcess.Running run = agent.start(AgentProcess.backupArgs(server, volume, source, state,
                        "--block-size", String.valueOf(BLOCK)));
                long start = System.nanoTime();
                long grown = 0;
                boolean agentRunning;
                if (atPoint) {
                    assertThat(server.awaitKillPoint(java.time.Duration.ofMinutes(2)))
                            .as("the server halted at commit.afterCatalogBatch:\n%s", server.diagnostics()).isTrue();
                    agentRunning = run.isAlive();
                    loop.record(KillPoints.COMMIT_AFTER_CATALOG_BATCH, true);
                } else {
                    while (run.isAlive() && grown < share * changeBytes && System.nanoTime() - start < 120_000_000_000L) {
                        Thread.sleep(2);
                        grown = server.dataLogBytes() - dataBefore;
                    }
                    Thread.sleep(extraMillis);
                    agentRunning = run.isAlive();
                    assertThat(server.kill()).as("the server died before the kill:\n%s", server.diagnostics()).isTrue();
                    loop.record(null, false);
                }
                long delay = (System.nanoTime() - start) / 1_000_000;
                AgentResult r = run.await();
                if (agentRunning) {
                    killedWhileAgentRan++;
                }
                String acknowledged = r.succeeded() ? BackupSummary.parse(r).snapshotId() : null;
                System.out.printf("[e2e] crash %d: server %s %d ms into the backup (data grew %d B), agent %s%n", it,
                        atPoint ? "halted at commit.afterCatalogBatch" : String.format("killed (aimed at %.0f %% of the upload + %d ms)",
                                share * 100, extraMillis), delay, grown,
                        r.succeeded() ? "had committed " + acknowledged : "failed: " + firstLine(r.stderr()));
                if (!r.succeeded()) {
                    // Notices (such as why a backup went full) may come first; the reason is one
                    // line, and no stack trace.
                    List<String> lines = r.stderrLines();
                    assertThat(lines.get(lines.size() - 1)).as("the agent says why in one line: %s", r)
                            .startsWith("holdfast-agent: error:");
                    assertThat(lines).as("no stack trace: %s", r).noneMatch(l -> l.startsWith("\tat "));
                }

                if (pointIteration(it + 1)) {
                    // hit 1: this iteration's undisturbed backup below; hit 2: the next iteration's backup
                    server.armKillPoint(KillPoints.COMMIT_AFTER_CATALOG_BATCH, 2);
                }
                server.start();

                // the agent protocol's listing over one connection: an agent JVM per restart proved nothing more
                List<String> listed = WireProbe.snapshotIds(server, volume);
                assertThat(listed).as("crash %d: every snapshot committed before survives", it).containsAll(before);
                List<String> appeared = new ArrayList<>(listed);
                appeared.removeAll(before);
                assertThat(appeared).as("crash %d: at most the in-flight backup appears, whole: %s", it, listed)
                        .hasSizeLessThanOrEqualTo(1);
                if (atPoint) {
                    assertThat(appeared).as("crash %d: the commit batch was durable when the server halted", it).hasSize(1);
                    assertThat(acknowledged).as("crash %d: halted before the acknowledgement", it).isNull();
                }
                if (acknowledged != null) {
                    assertThat(appeared).as("crash %d: a snapshot acknowledged to the agent is durable", it)
                            .containsExactly(acknowledged);
                }
                if (!appeared.isEmpty()) {
                    committed.put(appeared.get(0), inFlight);
                    inFlightCommitted++;
                    if (inFlightCommitted == 1) {
                        // the agent restores the first such snapshot; checkRestores below takes every one over the wire
                        restores.assertRestores(server, volume, appeared.get(0), inFlight, BLOCK);
                    }
                }

                checkRestores(server, volume, committed, random);

                // The next backup, undisturbed, succeeds and restores.
                img.fill(img.randomOffset(MIB, BLOCK), MIB, Content.COMPRESSIBLE);
                backup(server, volume, img, source, state, committed);
            }
            System.out.printf("[e2e] crash loop done: %d iterations, %d kills while the agent ran, %d in-flight"
                    + " backups found committed after restart, %d snapshots%n", iterations, killedWhileAgentRan,
                    inFlightCommitted, committed.size());
            loop.report(p -> p == KillPoints.COMMIT_AFTER_CATALOG_BATCH);
            assertThat(agent.snapshots(server, volume)).extracting(SnapshotInfo::id)
                    .containsExactlyElementsOf(committed.keySet());
            // every snapshot once more over the wire; the agent itself restores the newest (and restored the first
            // in-flight one as it appeared above): an agent JVM per snapshot proved nothing the probe does not
            RestoreCheck.assertRestoreOverTheWire(server, volume, committed);
            String newest = List.copyOf(committed.keySet()).get(committed.size() - 1);
            restores.assertRestores(server, volume, newest, committed.get(newest), BLOCK);
        }
    }

    /**
     * After a restart, every committed snapshot restores bit for bit. Checked over the wire by the
     * probe (no JVM per snapshot); past {@link #FULL_CHECK_LIMIT} snapshots (the slow profile's
     * long loop) the newest three and five at random.
     */
    private void checkRestores(ServerProcess server, String volume, Map<String, Path> committed, Random random) {
        List<String> ids = new ArrayList<>(committed.keySet());
        List<String> check = ids;
        if (ids.size() > FULL_CHECK_LIMIT) {
            check = new ArrayList<>(ids.subList(ids.size() - 3, ids.size()));
            for (int i = 0; i < 5; i++) {
                check.add(ids.get(random.nextInt(ids.size() - 3)));
            }
        }
        Map<String, Path> sample = new LinkedHashMap<>();
        check.forEach(id -> sample.put(id, committed.get(id)));
        RestoreCheck.assertRestoreOverTheWire(server, volume, sample);
    }

    private BackupSummary backup(ServerProcess server, String volume, VolumeImage img, Path source, Path state,
                                 Map<String, Path> committed) throws Exception {
        img.writeTo(source);
        BackupSummary s = agent.backup(server, volume, source, state, "--block-size", String.valueOf(BLOCK));
        Path expected = work.resolve("expected-" + committed.size() + "-" + System.nanoTime() + ".img");
        Files.copy(source, expected);
        assertThat(committed).as("a fresh snapshot id").doesNotContainKey(s.snapshotId());
        committed.put(s.snapshotId(), expected);
        return s;
    }

    /** Iterations 2, 5, 8, ...: the server halts itself at commit.afterCatalogBatch (armed at the restart before). */
    private static boolean pointIteration(int it) {
        return it % 3 == 2;
    }

    private static String firstLine(String s) {
        String t = s.strip();
        int nl = t.indexOf('\n');
        return nl < 0 ? t : t.substring(0, nl);
    }
}
