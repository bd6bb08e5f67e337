package org.holdfast.server.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.holdfast.server.e2e.VolumeImage.Content;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * End-to-end scenarios that every dedup engine must pass, through a real server process and
 * real agent processes: an image evolving over a dozen snapshots, and two volumes sharing most
 * of their content. One server per engine, shared by the tests of the class (each uses its own
 * volumes).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class EngineScenarioSuite {
    static final int BLOCK = 4096;
    static final int MIB = 1 << 20;

    private final LogDir logs = new LogDir(getClass().getSimpleName());
    private final AgentProcess agent = new AgentProcess(logs);
    private ServerProcess server;
    private VolumeImage previous;
    private Path work;
    private RestoreCheck restores;

    /** The value of {@code holdfast.dedup.engine}. */
    abstract String engine();

    /**
     * Share of duplicate blocks the engine may fail to find (stored again). Exact finds every
     * duplicate; a sampling engine may miss some (it costs space, never correctness).
     */
    abstract double missedDuplicateAllowance();

    /** Extra server properties for the engine (none by default). */
    java.util.Map<String, String> serverProperties() {
        return java.util.Map.of();
    }

    @BeforeAll
    void startServer(@TempDir Path dir) {
        work = dir;
        server = ServerProcess.start(dir.resolve("server"), engine(), serverProperties(), logs);
        restores = new RestoreCheck(agent, dir);
    }

    @AfterAll
    void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    /** One committed snapshot and the image file it must restore to. */
    record Committed(String id, Path expected, BackupSummary summary) {
    }

    @Test
    void backup_imageEvolvingOverThirteenSnapshots_everySnapshotRestoresByteIdentical() throws Exception {
        String volume = "evolving-" + engine();
        Path dir = Files.createDirectories(work.resolve(volume));
        Path source = dir.resolve("volume.img");
        Path state = Files.createDirectories(dir.resolve("state"));
        List<Committed> committed = new ArrayList<>();
        StringBuilder table = new StringBuilder();

        VolumeImage img = VolumeImage.generate(11, 12 * MIB);
        VolumeImage first = img.copy(12);
        BackupSummary s;

        // 1. the initial full backup
        s = snapshot(volume, img, source, state, dir, committed, table, "initial 12 MiB");
        assertThat(s.volumeBytes()).isEqualTo(img.length());

        // 2. a small in-place overwrite: three blocks rewritten, two bytes flipped elsewhere
        for (int i = 0; i < 3; i++) {
            img.fill(img.randomOffset(BLOCK, BLOCK), BLOCK, Content.RANDOM);
        }
        img.scribble(2);
        s = snapshot(volume, img, source, state, dir, committed, table, "3 blocks + 2 bytes overwritten");
        assertThat(s.sentBlocks()).as("sent blocks, %s", s).isLessThanOrEqualTo(5L);
        assertThat(s.sentBytes()).as("bytes sent for a 5-block change of a 12 MiB volume, %s", s)
                .isLessThan(img.length() / 100L);

        // 3. append: the volume grows by 2 MiB and an odd tail (size no longer a block multiple)
        img.append(2 * MIB + 1000, Content.RANDOM);
        s = snapshot(volume, img, source, state, dir, committed, table, "append 2 MiB + 1000 B");
        assertThat(s.volumeBytes()).isEqualTo(img.length());

        // 4. deletion: a 1 MiB region zeroed; zero blocks are never uploaded
        img.fill(img.randomOffset(MIB, BLOCK), MIB, Content.ZERO);
        s = snapshot(volume, img, source, state, dir, committed, table, "1 MiB zeroed");
        assertThat(s.sentBlocks()).as("zeroed blocks are not uploaded, %s", s).isZero();

        // 5. a block-aligned move: 2 MiB of existing content copied elsewhere; the server has it all
        int from = 2 * MIB;
        int to = 8 * MIB;
        img.move(from, to, 2 * MIB);
        s = snapshot(volume, img, source, state, dir, committed, table, "2 MiB moved, aligned");
        assertThat(s.newBlocks()).as("moved content is stored already, %s", s)
                .isLessThanOrEqualTo((long) (512 * missedDuplicateAllowance()));

        // 6. an unaligned shift: 1 MiB moved by 777 bytes, so every block of it is new
        img.move(5 * MIB, 5 * MIB + 777, MIB);
        s = snapshot(volume, img, source, state, dir, committed, table, "1 MiB shifted by 777 B");

        // 7. a big compressible overwrite
        img.fill(MIB, 3 * MIB, Content.COMPRESSIBLE);
        s = snapshot(volume, img, source, state, dir, committed, table, "3 MiB compressible overwrite");

        // 8. shrink to an odd size
        img.truncate(9 * MIB + 123);
        s = snapshot(volume, img, source, state, dir, committed, table, "shrink to 9 MiB + 123 B");
        assertThat(s.volumeBytes()).isEqualTo(img.length());

        // 9. grow again: a zero gap (sparse) then 1 MiB of data
        img.append(3 * MIB - 123, Content.ZERO).append(MIB, Content.RANDOM);
        s = snapshot(volume, img, source, state, dir, committed, table, "grow: 3 MiB zeros + 1 MiB data");
        assertThat(s.volumeBytes()).isEqualTo(13L * MIB);

        // 10. old content comes back: a region of the first snapshot copied back in place
        img.copyFrom(first, 0, 0, 2 * MIB);
        s = snapshot(volume, img, source, state, dir, committed, table, "2 MiB of snapshot 1 restored in place");
        assertThat(s.newBlocks()).as("content of snapshot 1 is stored already, %s", s)
                .isLessThanOrEqualTo((long) (512 * missedDuplicateAllowance()));

        // 11. nothing changed
        s = snapshot(volume, img, source, state, dir, committed, table, "no change");
        assertThat(s.changedBlocks()).as("%s", s).isZero();
        assertThat(s.sentBlocks()).as("%s", s).isZero();
        assertThat(s.sentBytes()).as("%s", s).isLessThan(4096L);

        // 12. many scattered one-byte writes
        img.scribble(100);
        s = snapshot(volume, img, source, state, dir, committed, table, "100 scattered bytes");
        assertThat(s.sentBytes()).as("%s", s).isLessThan(img.length() / 20L);

        // 13. a change the agent learns from a changed-blocks list: it reads only those ranges
        int r1 = 3 * MIB + 1234;
        int r2 = 10 * MIB + 99;
        img.fill(r1, 20_000, Content.RANDOM).fill(r2, 5000, Content.COMPRESSIBLE);
        Path changed = Files.writeString(dir.resolve("changed-blocks.txt"),
                "# two writes\n" + r1 + " 20000\n" + r2 + "\t5000\n");
        s = snapshot(volume, img, source, state, dir, committed, table, "2 ranges from --changed-blocks",
                "--changed-blocks", changed.toString());
        assertThat(s.mode()).isEqualTo("incremental");
        assertThat(s.bytesRead()).as("only the listed ranges are read, %s", s).isLessThan(img.length() / 20L);

        System.out.println("[e2e " + engine() + "] evolving volume, per snapshot:\n" + table);

        List<SnapshotInfo> listed = agent.snapshots(server, volume);
        assertThat(listed).extracting(SnapshotInfo::id)
                .containsExactlyElementsOf(committed.stream().map(Committed::id).toList());
        for (int i = 0; i < listed.size(); i++) {
            assertThat(listed.get(i).volumeBytes()).as("volume size of snapshot %s", listed.get(i).id())
                    .isEqualTo(Files.size(committed.get(i).expected()));
        }
        HttpResponse<String> rest = server.get("/api/v1/volumes/" + volume + "/snapshots");
        assertThat(rest.statusCode()).as(rest.body()).isEqualTo(200);
        JsonNode restList = new ObjectMapper().readTree(rest.body());
        assertThat(restList.isArray() ? restList.size() : restList.path("snapshots").size())
                .as("REST snapshot list: %s", rest.body()).isEqualTo(committed.size());
        // one snapshot id format: REST's ids are the agent's, which restore takes
        assertThat(restList.findValuesAsText("id")).containsExactlyElementsOf(listed.stream().map(SnapshotInfo::id).toList());

        // Every snapshot bit for bit over the wire (one connection, each block checked against its fingerprint).
        Map<String, Path> expected = new LinkedHashMap<>();
        committed.forEach(c -> expected.put(c.id(), c.expected()));
        RestoreCheck.assertRestoreOverTheWire(server, volume, expected);
        // Through the agent, newest first, all into the same file, at every change of size (shrink at 8,
        // growth at 3 and 9): a restore that leaves old bytes past the end of a smaller image is caught.
        // A restore between two of the same size proved nothing the probe above does not, at a JVM each.
        Path target = dir.resolve("restored.img");
        long restoredBytes = -1;
        for (int i = committed.size() - 1; i >= 0; i--) {
            Committed c = committed.get(i);
            long bytes = Files.size(c.expected());
            if (bytes != restoredBytes) {
                restores.assertRestoresInto(server, volume, c.id(), c.expected(), BLOCK, target);
                restoredBytes = bytes;
            }
        }
    }

    @Test
    void backup_secondVolumeSharingMostContent_storesOnlyItsUniqueBlocks() throws Exception {
        Path dir = Files.createDirectories(work.resolve("shared-" + engine()));
        String volumeA = "shared-a-" + engine();
        String volumeB = "shared-b-" + engine();
        VolumeImage a = VolumeImage.generate(21, 16 * MIB);
        VolumeImage b = a.copy(22);
        // B = A with eight 64 KiB regions rewritten and two bytes flipped: about 3 % unique
        for (int i = 0; i < 8; i++) {
            b.fill(b.randomOffset(64 << 10, BLOCK), 64 << 10, Content.RANDOM);
        }
        b.scribble(2);
        Set<String> fpA = a.blockFingerprints(BLOCK);
        Set<String> uniqueB = new HashSet<>(b.blockFingerprints(BLOCK));
        uniqueB.removeAll(fpA);
        long sharedB = b.blockFingerprints(BLOCK).size() - uniqueB.size();

        long before = server.dataDirBytes();
        Path fileA = a.writeTo(dir.resolve("a.img"));
        BackupSummary sa = agent.backup(server, volumeA, fileA, Files.createDirectories(dir.resolve("state-a")),
                "--block-size", String.valueOf(BLOCK));
        long afterA = server.dataDirBytes();
        Path fileB = b.writeTo(dir.resolve("b.img"));
        BackupSummary sb = agent.backup(server, volumeB, fileB, Files.createDirectories(dir.resolve("state-b")),
                "--block-size", String.valueOf(BLOCK));
        long afterB = server.dataDirBytes();

        long growthA = afterA - before;
        long growthB = afterB - afterA;
        System.out.printf("[e2e %s] shared volumes: A distinct blocks %d, new %d, stored %d B, data dir +%d B;"
                        + " B unique blocks %d, new %d, sent %d, stored %d B, data dir +%d B%n",
                engine(), fpA.size(), sa.newBlocks(), sa.storedBytes(), growthA,
                uniqueB.size(), sb.newBlocks(), sb.sentBlocks(), sb.storedBytes(), growthB);

        long allowedMisses = (long) Math.ceil(sharedB * missedDuplicateAllowance());
        assertThat(sb.newBlocks()).as("B's new blocks: its %d unique ones (+%d misses allowed), %s",
                uniqueB.size(), allowedMisses, sb).isBetween((long) uniqueB.size(), uniqueB.size() + allowedMisses);
        assertThat(sb.sentBlocks()).as("B uploads only what the server lacks, %s", sb)
                .isLessThanOrEqualTo(uniqueB.size() + allowedMisses);
        assertThat(sb.storedBytes()).as("stored bytes of B against A's, %s / %s", sb, sa)
                .isLessThan(sa.storedBytes() / 5);
        assertThat(growthB).as("data dir growth for B (%d B) against A (%d B)", growthB, growthA)
                .isLessThan(growthA / 4);

        restores.assertRestores(server, volumeA, sa.snapshotId(), fileA, BLOCK);
        restores.assertRestores(server, volumeB, sb.snapshotId(), fileB, BLOCK);
    }

    private BackupSummary snapshot(String volume, VolumeImage img, Path source, Path state, Path dir,
                                   List<Committed> committed, StringBuilder table, String change, String... extra)
            throws Exception {
        long[] range = img.changedBlockRange(previous, BLOCK);
        long previousLength = previous == null ? -1 : previous.length();
        previous = img.copy(0);
        img.writeTo(source);
        Path expected = dir.resolve("expected-" + (committed.size() + 1) + ".img");
        Files.copy(source, expected);
        List<String> args = new ArrayList<>(List.of("--block-size", String.valueOf(BLOCK)));
        args.addAll(List.of(extra));
        BackupSummary s = agent.backup(server, volume, source, state, args.toArray(String[]::new));
        assertThat(committed).extracting(Committed::id).as("a new snapshot id, %s", s).doesNotContain(s.snapshotId());
        committed.add(new Committed(s.snapshotId(), expected, s));
        assertThat(s.changedBlocks()).as("changed blocks of snapshot %d (%s): %s", committed.size(), change, s)
                .isBetween(range[0], range[1]);
        if (committed.size() > 1 && previousLength == img.length()) {
            // The agent chooses a full scan when the volume's size changed; otherwise its state must serve.
            assertThat(s.mode()).as("snapshot %d is incremental (the agent kept its state): %s", committed.size(), s)
                    .isEqualTo("incremental");
        }
        assertThat(s.sentBlocks()).as("a backup uploads no more than the changed blocks: %s", s)
                .isLessThanOrEqualTo(s.changedBlocks());
        table.append(String.format("  #%-2d %-40s %-11s size %9d changed %5d sent %5d blocks %9d B new %5d stored %9d B  %5d ms%n",
                committed.size(), change, s.mode(), s.volumeBytes(), s.changedBlocks(), s.sentBlocks(), s.sentBytes(),
                s.newBlocks(), s.storedBytes(), s.run().elapsed().toMillis()));
        return s;
    }

    ServerProcess server() {
        return server;
    }
}
