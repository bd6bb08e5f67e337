package org.holdfast.client.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import java.util.stream.LongStream;
import org.holdfast.common.ports.TestPorts;
import org.holdfast.client.AgentRun;
import org.holdfast.client.FakeServer;
import org.holdfast.client.Images;
import org.holdfast.client.LeakWatch;
import org.holdfast.client.LiveTempFileHolder;
import org.holdfast.client.scan.StateFile;
import org.holdfast.common.protocol.BackupMode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The whole agent (CLI, scan, upload, restore) against an in-process protocol peer on loopback,
 * including what a SIGKILLed run left behind (removed by the next run of that volume or target).
 */
class BackupRestoreTest {
    static final int BS = 4096;
    static final long SIZE = 3 * 1024 * 1024 + 1000; // not a multiple of the block size
    static final long BLOCKS = (SIZE + BS - 1) / BS;

    @TempDir
    Path dir;
    FakeServer server;
    Path image;
    Path state;

    @BeforeEach
    void start() throws Exception {
        server = new FakeServer();
        image = Images.create(dir.resolve("vol.img"), SIZE, BS, 1, 7);
        state = dir.resolve("state");
    }

    @AfterEach
    void stop() {
        server.close();
        LeakWatch.assertNoLeaks();
    }

    AgentRun backup(String... extra) {
        List<String> a = new ArrayList<>(List.of("backup", "--server", server.address(), "--no-tls", "--volume", "vm1",
                "--source", image.toString(), "--state-dir", state.toString(), "--json"));
        a.addAll(List.of(extra));
        return AgentRun.of(a.toArray(String[]::new));
    }

    AgentRun restore(String snapshot, Path target, String... extra) {
        List<String> a = new ArrayList<>(List.of("restore", "--server", server.address(), "--no-tls", "--volume", "vm1",
                "--snapshot", snapshot, "--target", target.toString(), "--json"));
        a.addAll(List.of(extra));
        return AgentRun.of(a.toArray(String[]::new));
    }

    Path stateFile() {
        return StateFile.path(state, "127.0.0.1_" + server.address().split(":")[1], "vm1");
    }

    @Test
    void backup_firstRun_fullAndRestoresBitForBit() throws Exception {
        AgentRun r = backup();
        assertThat(r.exit()).as("%s", r).isZero();
        JsonNode j = r.json();
        assertThat(j.get("snapshotId").asText()).isEqualTo("vm1@1");
        assertThat(j.get("logicalBytes").asLong()).isEqualTo(SIZE);
        assertThat(j.get("entriesSent").asLong()).isEqualTo(BLOCKS);
        assertThat(j.get("sentBlocks").asLong()).isPositive();
        assertThat(j.get("stateSaved").asBoolean()).isTrue();
        assertThat(Files.size(stateFile())).isEqualTo(StateFile.HEADER_BYTES_V2 + BLOCKS * StateFile.ENTRY_BYTES_V2);

        Path target = dir.resolve("restored.img");
        AgentRun rr = restore("1", target);
        assertThat(rr.exit()).as("%s", rr).isZero();
        assertThat(Images.sameContent(image, target)).isTrue();
        assertThat(rr.json().get("zeroBlocks").asLong()).isEqualTo((BLOCKS + 6) / 7);
    }

    @Test
    void backup_extFileSystemWithSmallerBlocks_noticeAtTheFullBackupOnly() throws Exception {
        // an ext superblock saying 1 KiB blocks at byte 1024 of the source, as mke2fs writes below 512 MiB
        try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "rw")) {
            f.seek(1024 + 24);
            f.write(new byte[] {0, 0, 0, 0});
            f.seek(1024 + 56);
            f.write(new byte[] {0x53, (byte) 0xEF});
        }
        AgentRun full = backup();
        assertThat(full.exit()).as("%s", full).isZero();
        assertThat(full.stderr()).contains("1024-byte blocks, smaller than the volume's 4096").contains("mke2fs -b 4096");
        Images.overwrite(image, 9, BS, 99);
        AgentRun incremental = backup();
        assertThat(incremental.exit()).as("%s", incremental).isZero();
        assertThat(incremental.stderr()).as("said at the full backup only").doesNotContain("smaller than the volume's");
        assertThat(backupOf4kImageStderr()).doesNotContain("smaller than the volume's");
    }

    private String backupOf4kImageStderr() throws Exception {
        try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "rw")) {
            f.seek(1024 + 24);
            f.write(new byte[] {2, 0, 0, 0}); // 4 KiB blocks
        }
        java.nio.file.Files.delete(stateFile()); // a full backup again
        AgentRun r = backup();
        assertThat(r.exit()).as("%s", r).isZero();
        assertThat(r.json().get("mode").asText()).isEqualTo("full");
        return r.stderr();
    }

    @Test
    void backup_afterChanges_sendsExactlyTheChangedLbns() throws Exception {
        assertThat(backup().exit()).isZero();
        long[] changed = {0, 5, 6, 7, 400, BLOCKS - 1};
        for (long lbn : changed) {
            Images.overwrite(image, lbn, BS, 1000 + lbn);
        }
        // Restore the original size: overwriting the last (partial) block extended the file.
        try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "rw")) {
            f.setLength(SIZE);
        }
        AgentRun r = backup();
        assertThat(r.exit()).as("%s", r).isZero();
        assertThat(r.json().get("mode").asText()).isEqualTo("incremental");
        FakeServer.SessionLog log = server.sessions.get(1);
        assertThat(log.mode).isEqualTo(BackupMode.INCREMENTAL);
        assertThat(log.entryLbns).containsExactly(0L, 5L, 6L, 7L, 400L, BLOCKS - 1);
        assertThat(r.json().get("changedBlocks").asLong()).isEqualTo(changed.length);

        Path target = dir.resolve("r2.img");
        assertThat(restore("latest", target).exit()).isZero();
        assertThat(Images.sameContent(image, target)).isTrue();
        Path first = dir.resolve("r1.img");
        assertThat(restore("1", first).exit()).isZero();
        assertThat(Images.sameContent(image, first)).isFalse();
    }

    @Test
    void backup_sparseImage_holesSkippedWithoutReadingAndRestoresBitForBit() throws Exception {
        assumeTrue(System.getProperty("os.name").startsWith("Linux"), "hole skipping needs lseek(SEEK_DATA)");
        long size = 64L << 20;
        image = Images.sparse(dir.resolve("sparse.img"), size, 3, 0, 17L << 20, size - (64 << 10));
        AgentRun r = backup();
        assertThat(r.exit()).as("%s", r).isZero();
        JsonNode j = r.json();
        assertThat(j.get("sourceBytesRead").asLong()).isEqualTo(3 * (64 << 10));
        assertThat(j.get("holeBytes").asLong()).isEqualTo(size - 3 * (64 << 10));
        assertThat(j.get("bytesRead").asLong()).isEqualTo(size);
        assertThat(j.get("entriesSent").asLong()).isEqualTo(size / BS);
        assertThat(j.get("sentBlocks").asLong()).isEqualTo(3 * 16);
        assertRestoresImage("1");
    }

    /** Restores {@code snapshot} to a new file and asserts it equals the image byte for byte. */
    private void assertRestoresImage(String snapshot) throws Exception {
        Path target = dir.resolve("restored-" + snapshot + "-" + System.nanoTime() + ".img");
        AgentRun rr = restore(snapshot, target);
        assertThat(rr.exit()).as("%s", rr).isZero();
        assertThat(Images.sameContent(image, target)).isTrue();
    }

    @Test
    void backup_sparseImageWithReadHoles_readsEveryByteAndSendsTheSame() throws Exception {
        long size = 32L << 20;
        image = Images.sparse(dir.resolve("sparse.img"), size, 4, 8L << 20, 9L << 20);
        AgentRun r = backup("--read-holes", "--threads", "1");
        assertThat(r.exit()).as("%s", r).isZero();
        JsonNode j = r.json();
        assertThat(j.get("sourceBytesRead").asLong()).isEqualTo(size);
        assertThat(j.get("holeBytes").asLong()).isZero();
        assertThat(j.get("sentBlocks").asLong()).isEqualTo(2 * 16);
        assertRestoresImage("1");
    }

    @Test
    void backup_blocksTheServerHolds_tagsProvePossessionInFullAndIncremental() throws Exception {
        assertThat(backup().exit()).isZero();
        Files.delete(stateFile()); // a full backup again: the reading threads tag every block
        AgentRun full = backup();
        assertThat(full.exit()).as("%s", full).isZero();
        FakeServer.SessionLog again = server.sessions.get(1);
        assertThat(again.provenTags).isEqualTo(BLOCKS - (BLOCKS + 6) / 7);
        assertThat(again.badTags).isZero();
        assertThat(full.json().get("sentBlocks").asLong()).isZero();

        // an incremental: LBN 5 now holds LBN 1's bytes, which the server has; the assembler tags it
        byte[] one = new byte[BS];
        try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "rw")) {
            f.seek(BS);
            f.readFully(one);
            f.seek(5L * BS);
            f.write(one);
        }
        AgentRun inc = backup();
        assertThat(inc.exit()).as("%s", inc).isZero();
        assertThat(inc.json().get("mode").asText()).isEqualTo("incremental");
        FakeServer.SessionLog log = server.sessions.get(2);
        assertThat(log.entryLbns).containsExactly(5L);
        assertThat(log.provenTags).isEqualTo(1);
        assertThat(log.badTags).isZero();
    }

    @Test
    void backup_negativeThreads_usageExit2() {
        AgentRun r = backup("--threads", "-1");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.stderr()).contains("--threads");
        assertThat(server.sessions).isEmpty();
    }

    @Test
    void backup_unchangedVolume_sendsNothing() {
        assertThat(backup().exit()).isZero();
        AgentRun r = backup();
        assertThat(r.exit()).isZero();
        assertThat(server.sessions.get(1).entryLbns).isEmpty();
        assertThat(r.json().get("sentBlocks").asLong()).isZero();
        assertThat(server.snapshots("vm1")).hasSize(2);
    }

    @Test
    void backup_tornStateFile_readsEverythingAndStaysCorrect() throws Exception {
        assertThat(backup().exit()).isZero();
        Images.overwrite(image, 3, BS, 77);
        try (RandomAccessFile f = new RandomAccessFile(stateFile().toFile(), "rw")) {
            f.setLength(f.length() - 10);
        }
        AgentRun r = backup();
        assertThat(r.exit()).as("%s", r).isZero();
        assertThat(r.json().get("mode").asText()).isEqualTo("full");
        assertThat(server.sessions.get(1).base).isZero();
        assertThat(server.sessions.get(1).entryLbns).hasSize((int) BLOCKS);
        Path target = dir.resolve("r.img");
        assertThat(restore("2", target).exit()).isZero();
        assertThat(Images.sameContent(image, target)).isTrue();
    }

    @Test
    void backup_corruptFingerprintInState_readsEverything() throws Exception {
        assertThat(backup().exit()).isZero();
        try (RandomAccessFile f = new RandomAccessFile(stateFile().toFile(), "rw")) {
            f.seek(StateFile.HEADER_BYTES_V2 + StateFile.ENTRY_BYTES_V2 * 10 + 3);
            int b = f.read();
            f.seek(StateFile.HEADER_BYTES_V2 + StateFile.ENTRY_BYTES_V2 * 10 + 3);
            f.write(b ^ 0x40);
        }
        AgentRun r = backup();
        assertThat(r.exit()).isZero();
        assertThat(r.json().get("mode").asText()).isEqualTo("full");
        assertThat(server.sessions.get(1).entryLbns).hasSize((int) BLOCKS);
    }

    @Test
    void backup_serverHasNewerSnapshot_fullBecauseParentDiffers() throws Exception {
        assertThat(backup().exit()).isZero();
        server.commitForeignSnapshot("vm1");
        Images.overwrite(image, 9, BS, 99);
        AgentRun r = backup();
        assertThat(r.exit()).isZero();
        assertThat(r.json().get("mode").asText()).isEqualTo("full");
        assertThat(r.json().get("fullReason").asText()).isEqualTo("the server's newest snapshot is 2, the state file's is 1");
        assertThat(server.sessions.get(1).entryLbns).hasSize((int) BLOCKS);
        Path target = dir.resolve("r.img");
        assertThat(restore("latest", target).exit()).isZero();
        assertThat(Images.sameContent(image, target)).isTrue();
    }

    @Test
    void backup_serverLostTheStateFilesSnapshot_fullAndSaysSo() throws Exception {
        assertThat(backup().exit()).isZero();
        Images.overwrite(image, 9, BS, 99);
        assertThat(backup().exit()).isZero();
        server.rollBack("vm1", 1); // a catalog restore: vm1@2, which the state file names, is gone
        AgentRun r = backup();
        assertThat(r.exit()).isZero();
        assertThat(r.json().get("mode").asText()).isEqualTo("full");
        assertThat(r.json().get("fullReason").asText()).isEqualTo("the server's newest snapshot is 1, the state file's is 2"
                + " (the server no longer has vm1@2: its catalog was restored from a backup, or that snapshot was deleted)");
        assertThat(r.stderr()).contains("reading the whole volume (full backup): the server's newest snapshot is 1");
        assertThat(server.sessions.get(2).entryLbns).hasSize((int) BLOCKS);
    }

    @Test
    void backup_serverAsksFull_sendsEveryLbn() {
        assertThat(backup().exit()).isZero();
        server.forceFull = true;
        AgentRun r = backup();
        assertThat(r.exit()).isZero();
        assertThat(r.json().get("mode").asText()).isEqualTo("full");
        // the base is the server's newest snapshot: a server asks for full then only to repair damaged blocks
        assertThat(r.json().get("fullReason").asText()).isEqualTo("the server asked for a full backup: its newest snapshot"
                + " vm1@1 references damaged blocks, and a full backup re-reads the volume and repairs them");
        assertThat(server.sessions.get(1).entryLbns).containsExactlyElementsOf(LongStream.range(0, BLOCKS).boxed().toList());
    }

    @Test
    void backup_volumeGrew_fullAndCorrect() throws Exception {
        assertThat(backup().exit()).isZero();
        try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "rw")) {
            f.setLength(SIZE + 3 * BS);
        }
        AgentRun r = backup();
        assertThat(r.exit()).as("%s", r).isZero();
        assertThat(r.json().get("mode").asText()).isEqualTo("full");
        Path target = dir.resolve("r.img");
        assertThat(restore("2", target).exit()).isZero();
        assertThat(Images.sameContent(image, target)).isTrue();
    }

    @Test
    void backup_changedBlocksList_readsOnlyListedRangesAndKeepsStateComplete() throws Exception {
        assertThat(backup().exit()).isZero();
        Images.overwrite(image, 20, BS, 5);
        Images.overwrite(image, 21, BS, 6);
        Path list = dir.resolve("changed.txt");
        Files.writeString(list, "# from the change tracker\n" + (20L * BS + 100) + " " + (BS + 10) + "\n\n"
                + (300L * BS) + " " + BS + "   # unchanged, listed anyway\n");
        AgentRun r = backup("--changed-blocks", list.toString());
        assertThat(r.exit()).as("%s", r).isZero();
        assertThat(r.json().get("blocksRead").asLong()).isEqualTo(3);
        assertThat(server.sessions.get(1).entryLbns).containsExactly(20L, 21L);
        Path target = dir.resolve("r.img");
        assertThat(restore("2", target).exit()).isZero();
        assertThat(Images.sameContent(image, target)).isTrue();
        // The state kept every other LBN's fingerprint: a plain incremental run now finds nothing new.
        AgentRun again = backup();
        assertThat(again.json().get("mode").asText()).isEqualTo("incremental");
        assertThat(server.sessions.get(2).entryLbns).isEmpty();
    }

    @Test
    void backup_changedBlocksWithoutTrustedState_readsEverythingAndSaysSo() throws Exception {
        Path list = dir.resolve("changed.txt");
        Files.writeString(list, "0 4096\n");
        AgentRun r = backup("--changed-blocks", list.toString());
        assertThat(r.exit()).as("%s", r).isZero();
        assertThat(r.json().get("blocksRead").asLong()).isEqualTo(BLOCKS);
        assertThat(r.stderr()).contains("ignoring --changed-blocks");
    }

    @Test
    void backup_changedBlocksBeyondVolume_usageErrorAndNoSnapshot() throws Exception {
        assertThat(backup().exit()).isZero();
        Path list = dir.resolve("changed.txt");
        Files.writeString(list, "0 4096\n" + SIZE + " 4096\n");
        AgentRun r = backup("--changed-blocks", list.toString());
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.stderr()).contains("line 2").doesNotContain("\tat ");
        assertThat(server.snapshots("vm1")).hasSize(1);
    }

    @Test
    void backup_noBlockSizeNoState_takesTheVolumesBlockSize() throws Exception {
        assertThat(backup("--block-size", "8192").exit()).isZero();
        Files.delete(stateFile()); // as on a new host: nothing local says the block size
        AgentRun r = backup();
        assertThat(r.exit()).as("%s", r).isZero();
        assertThat(r.json().get("blockSize").asInt()).isEqualTo(8192);
        AgentRun mismatch = backup("--block-size", "4096");
        assertThat(mismatch.exit()).isEqualTo(4);
        assertThat(mismatch.stderr()).contains("BLOCK_SIZE_MISMATCH").contains("leave the option out");
    }

    @Test
    void backup_overQuota_exit4OneLineNamingVolumeQuotaAndWhatToDo() throws Exception {
        // the server's text (QuotaAdmission.refusal): its advice is the only advice on the line
        server.quotaRefusal = "volume 'vm1' is 3.0 MiB (3146728 bytes), over its quota of 1.0 MiB (1048576 bytes); nothing was stored."
                + " Ask an operator to raise the quota (PATCH /api/v1/volumes/vm1 with {\"quotaBytes\": 3146728} or more)"
                + " or back up a smaller volume";
        AgentRun r = backup();
        assertThat(r.exit()).as("%s", r).isEqualTo(4);
        assertThat(r.stderr()).isEqualTo("holdfast-agent: error: server refused: QUOTA_EXCEEDED: " + server.quotaRefusal + "\n");
        assertThat(server.snapshots("vm1")).isEmpty();
        assertThat(stateFile()).doesNotExist();
    }

    @Test
    void backup_overAnAgentPortLimit_exit4RejectedNamingTheLimitNothingStored() throws Exception {
        server.limitRefusal = "volume size 5000000000000000000 bytes is over holdfast.ingest.max-volume-size (64 TB)";
        AgentRun r = backup();
        assertThat(r.exit()).as("%s", r).isEqualTo(4);
        assertThat(r.stderr().lines()).hasSize(1);
        assertThat(r.stderr()).contains("LIMIT_EXCEEDED").contains("max-volume-size").contains("agent-port limits");
        assertThat(server.snapshots("vm1")).isEmpty();
        assertThat(stateFile()).doesNotExist();
    }

    @Test
    void backup_serverLostAWorkerMidway_exit8TransientStateUnchanged_runAgainCommits() throws Exception {
        assertThat(backup().exit()).isZero();
        byte[] stateBefore = Files.readAllBytes(stateFile());
        Images.overwrite(image, 11, BS, 1234);
        server.workerLost = "data worker w1, id 2 is lost: its link closed; nothing of this backup was committed: run it again";
        AgentRun r = backup();
        assertThat(r.exit()).as("%s", r).isEqualTo(8);
        assertThat(r.stderr()).isEqualTo("holdfast-agent: error: server refused: WORKER_UNAVAILABLE: " + server.workerLost
                + " (transient: nothing was committed; run the backup again (the agent daemon retries it))\n");
        assertThat(r.json().get("ok").asBoolean(true)).isFalse();
        assertThat(r.json().get("exitCode").asInt()).isEqualTo(8);
        assertThat(r.json().get("error").asText()).as("what a script retries on").isEqualTo("transient");
        assertThat(r.json().get("message").asText()).isEqualTo("server refused: WORKER_UNAVAILABLE: " + server.workerLost);
        assertThat(Files.readAllBytes(stateFile())).isEqualTo(stateBefore);
        assertThat(server.snapshots("vm1")).hasSize(1);
        server.workerLost = null;
        AgentRun again = backup();
        assertThat(again.exit()).as("%s", again).isZero();
        assertThat(again.json().get("mode").asText()).isEqualTo("incremental");
        assertThat(server.snapshots("vm1")).hasSize(2);
    }

    /**
     * The server goes away mid-backup without a word; {@code reset}: its kernel resets the connection
     * (a killed server with the agent's data unread), else closes it. Exit 3 says what happened and what
     * to do, never a Java exception's name, and changes nothing.
     */
    @ParameterizedTest(name = "reset {0}")
    @ValueSource(booleans = {false, true})
    void backup_serverClosesConnectionMidUpload_exit3SaysWhatHappenedNothingCommittedRetryWorks(boolean reset) throws Exception {
        assertThat(backup().exit()).isZero();
        byte[] stateBefore = Files.readAllBytes(stateFile());
        for (long lbn = 1; lbn < BLOCKS; lbn += 2) {
            Images.overwrite(image, lbn, BS, 100 + lbn);
        }
        server.hangUpOnBlocks = true;
        server.hangUpWithReset = reset;
        AgentRun r = backup();
        assertThat(r.exit()).as("%s", r).isEqualTo(3);
        assertThat(r.stderr()).isEqualTo("holdfast-agent: error: the connection to the server " + server.address()
                + " closed during the backup (did the server stop or restart?); nothing of this backup was committed"
                + " (run the backup again once the server is up: blocks it already stored are not sent again)\n");
        assertThat(server.snapshots("vm1")).hasSize(1);
        assertThat(Files.readAllBytes(stateFile())).as("state unchanged").isEqualTo(stateBefore);

        server.hangUpOnBlocks = false;
        AgentRun again = backup();
        assertThat(again.exit()).as("%s", again).isZero();
        assertThat(again.json().get("mode").asText()).isEqualTo("incremental");
        Path target = dir.resolve("r.img");
        assertThat(restore("latest", target).exit()).isZero();
        assertThat(Images.sameContent(image, target)).isTrue();
    }

    @Test
    void backup_noTokenServerNeedsOne_hintSaysHowToGiveOneNotToCheckIt() {
        server.tokenRequired = "token refused: no API token: the agent sent none, and this server needs one";
        AgentRun r = backup();
        assertThat(r.exit()).as("%s", r).isEqualTo(4);
        assertThat(r.stderr()).isEqualTo("holdfast-agent: error: server refused: UNAUTHORIZED: " + server.tokenRequired
                + " (" + ConnectionOptions.NO_TOKEN_HINT + ")\n");
        assertThat(server.snapshots("vm1")).isEmpty();
    }

    @Test
    void backup_serverStorageFullMidway_exit7StateUnchangedNextBackupCorrect() throws Exception {
        assertThat(backup().exit()).isZero();
        byte[] stateBefore = Files.readAllBytes(stateFile());
        Images.overwrite(image, 11, BS, 1234);
        server.storageFull = true;
        AgentRun r = backup();
        assertThat(r.exit()).as("%s", r).isEqualTo(7);
        assertThat(r.stderr()).isEqualTo("holdfast-agent: error: server refused: STORAGE_FULL: " + FakeServer.STORAGE_FULL_MESSAGE
                + " (retry once space is free)\n");
        assertThat(Files.readAllBytes(stateFile())).isEqualTo(stateBefore);
        assertThat(server.snapshots("vm1")).hasSize(1);
        try (var s = Files.list(stateFile().getParent())) {
            assertThat(s).containsExactly(stateFile()); // no temp state left behind
        }
        server.storageFull = false;
        AgentRun again = backup();
        assertThat(again.exit()).isZero();
        assertThat(again.json().get("mode").asText()).isEqualTo("incremental");
        assertThat(server.sessions.get(2).entryLbns).containsExactly(11L);
        Path target = dir.resolve("r.img");
        assertThat(restore("latest", target).exit()).isZero();
        assertThat(Images.sameContent(image, target)).isTrue();
    }

    @Test
    void backup_serverAnswersWrongRun_integrityExit6NoSnapshot() {
        server.wrongNeed = true;
        AgentRun r = backup();
        assertThat(r.exit()).as("%s", r).isEqualTo(6);
        assertThat(r.stderr()).contains("broke the protocol");
        assertThat(server.snapshots("vm1")).isEmpty();
    }

    @Test
    void restore_corruptPayload_integrityErrorAndTargetUntouched() throws Exception {
        assertThat(backup().exit()).isZero();
        Path target = dir.resolve("existing.img");
        Files.writeString(target, "old content");
        server.corruptRestore = true;
        AgentRun r = restore("1", target, "--force");
        assertThat(r.exit()).as("%s", r).isEqualTo(6);
        assertThat(r.stderr()).contains("failed verification");
        assertThat(Files.readString(target)).isEqualTo("old content");
        try (var s = Files.list(dir)) {
            assertThat(s.map(p -> p.getFileName().toString())).noneMatch(n -> n.endsWith(".holdfast-restore"));
        }
    }

    @Test
    void restore_serverReportsDamagedBlock_exit6NamesBlockVolumeSnapshotLbn() throws Exception {
        assertThat(backup().exit()).isZero();
        Path target = dir.resolve("damaged.img");
        Files.writeString(target, "old content");
        // the server's text (ErrorMapping.messageOf of a CorruptBlockException)
        server.damagedRestore = "damaged block on the server: data-log [/data/log-00000001.hfl] key pbn 17 at offset 4128:"
                + " stored bytes checksum (CRC32C) mismatch (volume vm1, snapshot vm1@1, LBN 5); the block is marked bad:"
                + " the next backup holding its content repairs it (see docs/operations.md, \"Verify\")";
        AgentRun r = restore("1", target, "--force");
        assertThat(r.exit()).as("%s", r).isEqualTo(6);
        assertThat(r.stderr()).isEqualTo("holdfast-agent: error: server refused: CORRUPT_DATA: " + server.damagedRestore
                + " (retry the restore after that backup)\n");
        assertThat(Files.readString(target)).as("the target is not replaced").isEqualTo("old content");
    }

    @Test
    void restore_serverLostAWorker_exit8_hintNamesTheRestoreNotTheBackup() throws Exception {
        assertThat(backup().exit()).isZero();
        Path target = dir.resolve("lost.img");
        Files.writeString(target, "old content");
        server.workerLostRestore = "data worker w1, id 2 is lost: its link closed; the blocks it holds cannot be read now";
        AgentRun r = restore("1", target, "--force");
        assertThat(r.exit()).as("%s", r).isEqualTo(8);
        String hint = "transient: the server lost a worker this restore needed; run 'holdfast-agent restore' again once its workers"
                + " are up (GET /api/v1/cluster), or, if it stays down, after holdfast.cluster.lost-after, when the master reads its"
                + " blocks from the bucket (data on workers with a bucket)";
        assertThat(r.stderr()).isEqualTo("holdfast-agent: error: server refused: WORKER_UNAVAILABLE: " + server.workerLostRestore
                + " (" + hint + ")\n");
        assertThat(r.json().get("error").asText()).isEqualTo("transient");
        assertThat(r.json().get("hint").asText()).isEqualTo(hint);
        assertThat(Files.readString(target)).as("the target is not replaced").isEqualTo("old content");
    }

    @Test
    void restore_streamEndsEarly_failsWithoutReplacingTarget() throws Exception {
        assertThat(backup().exit()).isZero();
        Path target = dir.resolve("t.img");
        server.truncateRestore = true;
        AgentRun r = restore("1", target);
        assertThat(r.exit()).as("%s", r).isEqualTo(6);
        assertThat(target).doesNotExist();
    }

    /** A server that is slow to build a frame sends empty RESTORE_DATA keep-alives: the agent takes them and restores byte for byte. */
    @Test
    void restore_emptyKeepAliveFrames_acceptedByteForByte() throws Exception {
        assertThat(backup().exit()).isZero();
        server.keepAliveRestore = true;
        Path target = dir.resolve("kept.img");
        AgentRun r = restore("1", target);
        assertThat(r.exit()).as("%s", r).isZero();
        assertThat(Files.readAllBytes(target)).isEqualTo(Files.readAllBytes(image));
    }

    @Test
    void restore_unknownSnapshot_rejectedExit4() {
        assertThat(backup().exit()).isZero();
        AgentRun r = restore("42", dir.resolve("t.img"));
        assertThat(r.exit()).isEqualTo(4);
        assertThat(r.stderr().lines()).hasSize(1);
        assertThat(r.stderr()).contains("UNKNOWN_SNAPSHOT").contains("snapshots");
    }

    @Test
    void snapshots_json_listsIdCreatedAtAndSizes() {
        assertThat(backup().exit()).isZero();
        assertThat(backup().exit()).isZero();
        AgentRun r = AgentRun.of("snapshots", "--server", server.address(), "--no-tls", "--volume", "vm1", "--json");
        assertThat(r.exit()).as("%s", r).isZero();
        JsonNode a = r.json();
        assertThat(a.isArray()).isTrue();
        assertThat(a).hasSize(2);
        assertThat(a.get(0).get("id").asText()).isEqualTo("vm1@1");
        assertThat(a.get(1).get("logicalBytes").asLong()).isEqualTo(SIZE);
        assertThat(a.get(0).get("createdAt").asText()).matches("\\d{4}-\\d\\d-\\d\\dT.*Z");
        for (String f : List.of("volumeBytes", "blockSize", "changedBlocks", "storedBytes")) {
            assertThat(a.get(0).has(f)).as(f).isTrue();
        }
        AgentRun table = AgentRun.of("snapshots", "--server", server.address(), "--no-tls", "--volume", "vm1");
        assertThat(table.stdout()).contains("CREATED").contains("STORED").contains("vm1@2");
    }

    @Test
    void restore_idAsSnapshotsPrintsIt_sameAsSequence() throws Exception {
        assertThat(backup().exit()).isZero();
        String id = AgentRun.of("snapshots", "--server", server.address(), "--no-tls", "--volume", "vm1", "--json").json()
                .get(0).get("id").asText();
        Path byId = dir.resolve("by-id.img");
        AgentRun r = restore(id, byId);
        assertThat(r.exit()).as("%s", r).isZero();
        assertThat(r.json().get("snapshotId").asText()).isEqualTo(id);
        Path bySeq = dir.resolve("by-seq.img");
        assertThat(restore("1", bySeq).exit()).isZero();
        assertThat(Files.readAllBytes(byId)).isEqualTo(Files.readAllBytes(bySeq));
    }

    @Test
    void restore_idOfAnotherVolume_usageErrorNamingBoth() {
        assertThat(backup().exit()).isZero();
        AgentRun r = restore("web@1", dir.resolve("x.img"));
        assertThat(r.exit()).as("%s", r).isEqualTo(2);
        assertThat(r.stderr()).contains("web").contains("vm1");
        assertThat(dir.resolve("x.img")).doesNotExist();
    }

    @Test
    void anyCommand_serverUnreachable_networkExit3OneLine() throws Exception {
        int port = TestPorts.claim(); // claimed: no test JVM listens there
        AgentRun r = AgentRun.of("snapshots", "--server", "127.0.0.1:" + port, "--volume", "vm1");
        assertThat(r.exit()).isEqualTo(3);
        assertThat(r.stderr().strip().lines()).hasSize(1);
        assertThat(r.stderr()).contains("cannot connect").contains("--server");
        AgentRun debug = AgentRun.of("snapshots", "--server", "127.0.0.1:" + port, "--volume", "vm1", "--debug");
        assertThat(debug.stderr()).contains("\tat ");
    }

    @Test
    void backup_badVolumeName_usageExit2() {
        AgentRun r = AgentRun.of("backup", "--server", server.address(), "--no-tls", "--volume", ".hidden", "--source", image.toString());
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.stderr()).contains("invalid volume name");
    }

    @Test
    void backup_missingRequiredOption_usageExit2() {
        AgentRun r = AgentRun.of("backup", "--volume", "vm1");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.stderr()).contains("--source");
    }

    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(longs = {0, 1, BS - 1, BS, BS + 1})
    void backupRestore_tinyVolumes_roundTripExactly(long size) throws Exception {
        image = Images.create(dir.resolve("tiny.img"), size, BS, size, 0);
        AgentRun b = backup();
        assertThat(b.exit()).as("%s", b).isZero();
        Path target = dir.resolve("tiny-restored.img");
        AgentRun r = restore("latest", target);
        assertThat(r.exit()).as("%s", r).isZero();
        assertThat(Files.size(target)).isEqualTo(size);
        assertThat(Images.sameContent(image, target)).isTrue();
        AgentRun again = backup();
        assertThat(again.exit()).isZero();
        assertThat(again.json().get("mode").asText()).isEqualTo("incremental");
    }

    @Test
    void backup_smallWindowAndScatteredChanges_backpressureKeepsEverythingCorrect() throws Exception {
        long size = 24L << 20;
        image = Images.create(dir.resolve("big.img"), size, BS, 11, 9);
        AgentRun full = backup("--window-mib", "8"); // two 4 MiB slabs for 24 MiB of payloads
        assertThat(full.exit()).as("%s", full).isZero();
        List<Long> changed = new ArrayList<>();
        for (long lbn = 3; lbn < size / BS; lbn += 5) { // ~1200 runs of one block each
            Images.overwrite(image, lbn, BS, lbn);
            changed.add(lbn);
        }
        AgentRun inc = backup("--window-mib", "8");
        assertThat(inc.exit()).as("%s", inc).isZero();
        assertThat(server.sessions.get(1).entryLbns).containsExactlyElementsOf(changed);
        assertThat(inc.json().get("sentBlocks").asLong()).isEqualTo(changed.size());
        Path target = dir.resolve("big-restored.img");
        assertThat(restore("latest", target).exit()).isZero();
        assertThat(Images.sameContent(image, target)).isTrue();
    }

    @Test
    void leakWatch_isHookedIntoNetty() {
        assertThat(LeakWatch.installed()).isTrue();
    }

    @Test
    void help_listsExitCodes() {
        AgentRun r = AgentRun.of("--help");
        assertThat(r.exit()).isZero();
        assertThat(r.stdout()).contains("Exit codes").contains("integrity");
    }

    // --change-hash, --rehash-every: the cheap change hash of state file format 2

    private AgentRun backedUp(String... extra) {
        AgentRun r = backup(extra);
        assertThat(r.exit()).as("%s", r).isZero();
        return r;
    }

    @Test
    void backup_seededChanges_everyChangedBlockSentAndOnlyThoseSha256Hashed() throws Exception {
        backedUp();
        Random rnd = new Random(14);
        for (int round = 1; round <= 4; round++) {
            byte[] before = Files.readAllBytes(image);
            try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "rw")) {
                for (int i = 0; i < 12; i++) {
                    int lbn = rnd.nextInt((int) BLOCKS);
                    long at = (long) lbn * BS + rnd.nextInt((int) Math.min(BS, SIZE - (long) lbn * BS));
                    switch (i % 4) {
                        case 0 -> { // one bit
                            f.seek(at);
                            f.write(before[(int) at] ^ (1 << rnd.nextInt(8)));
                        }
                        case 1 -> { // the block (what is inside the volume) to zeros
                            f.seek((long) lbn * BS);
                            f.write(new byte[(int) Math.min(BS, SIZE - (long) lbn * BS)]);
                        }
                        case 2 -> { // rewritten with what it held: not a change
                            f.seek((long) lbn * BS);
                            f.write(before, lbn * BS, (int) Math.min(BS, SIZE - (long) lbn * BS));
                        }
                        default -> { // one byte somewhere set to a random value
                            f.seek(at);
                            f.write(rnd.nextInt(256));
                        }
                    }
                }
            }
            byte[] after = Files.readAllBytes(image);
            TreeSet<Long> changed = new TreeSet<>();
            long nonZeroChanged = 0;
            for (int b = 0; b < BLOCKS; b++) {
                int from = b * BS;
                int to = (int) Math.min(after.length, from + BS);
                if (java.util.Arrays.mismatch(before, from, to, after, from, to) >= 0) {
                    changed.add((long) b);
                    boolean zero = true;
                    for (int k = from; k < to && zero; k++) {
                        zero = after[k] == 0;
                    }
                    nonZeroChanged += zero ? 0 : 1;
                }
            }
            JsonNode j = backedUp().json();
            assertThat(j.get("mode").asText()).isEqualTo("incremental");
            assertThat(j.get("changeHash").asText()).isEqualTo("xxh128");
            assertThat(j.get("rehashReason").isNull()).as("round %d: %s", round, j).isTrue();
            assertThat(server.sessions.get(round).entryLbns).as("round %d", round).containsExactlyElementsOf(changed);
            assertThat(j.get("sha256Blocks").asLong()).as("round %d", round).isEqualTo(nonZeroChanged);
            assertRestoresImage("latest");
        }
    }

    @Test
    void backup_rehashEvery3_everyThirdBackupHashesEveryBlock() throws Exception {
        long nonZero = BLOCKS - (BLOCKS + 6) / 7;
        List<String> reasons = new ArrayList<>();
        List<Long> hashed = new ArrayList<>();
        for (int i = 1; i <= 5; i++) {
            Images.overwrite(image, 8 * i + 1, BS, 500 + i); // never a zero block (every 7th)
            JsonNode j = backedUp("--rehash-every", "3").json();
            reasons.add(j.get("rehashReason").isNull() ? null : j.get("rehashReason").asText());
            hashed.add(j.get("sha256Blocks").asLong());
            assertThat(server.sessions.get(i - 1).entryLbns).hasSize(i == 1 ? (int) BLOCKS : 1);
        }
        assertThat(reasons.get(0)).isEqualTo("full backup");
        assertThat(reasons.get(1)).isNull();
        assertThat(reasons.get(2)).isNull();
        assertThat(reasons.get(3)).contains("backup 3 since the last full re-hash");
        assertThat(reasons.get(4)).isNull();
        assertThat(hashed).containsExactly(nonZero, 1L, 1L, nonZero, 1L);
        assertRestoresImage("latest");
    }

    @Test
    void backup_sha256ThenXxh128_formatOneStateReadAndUpgraded() throws Exception {
        JsonNode first = backedUp("--change-hash", "sha256").json();
        assertThat(first.get("changeHash").asText()).isEqualTo("sha256");
        assertThat(Files.size(stateFile())).isEqualTo(StateFile.HEADER_BYTES + BLOCKS * 32);

        Images.overwrite(image, 20, BS, 9);
        JsonNode second = backedUp().json();
        assertThat(second.get("mode").asText()).isEqualTo("incremental");
        assertThat(second.get("rehashReason").asText()).contains("no cheap hashes");
        assertThat(server.sessions.get(1).entryLbns).containsExactly(20L);
        assertThat(Files.size(stateFile())).isEqualTo(StateFile.HEADER_BYTES_V2 + BLOCKS * StateFile.ENTRY_BYTES_V2);

        Images.overwrite(image, 21, BS, 10);
        JsonNode third = backedUp().json();
        assertThat(third.get("rehashReason").isNull()).isTrue();
        assertThat(third.get("sha256Blocks").asLong()).isEqualTo(1);
        assertThat(server.sessions.get(2).entryLbns).containsExactly(21L);
        assertRestoresImage("latest");
    }

    @Test
    void backup_corruptChangeHashInState_fullWithReasonThenRebuilt() throws Exception {
        backedUp();
        try (RandomAccessFile f = new RandomAccessFile(stateFile().toFile(), "rw")) {
            long at = StateFile.HEADER_BYTES_V2 + StateFile.ENTRY_BYTES_V2 * 10L + 40; // inside LBN 10's cheap hash
            f.seek(at);
            int b = f.read();
            f.seek(at);
            f.write(b ^ 0x04);
        }
        AgentRun r = backedUp();
        assertThat(r.json().get("mode").asText()).isEqualTo("full");
        assertThat(r.stderr()).contains("reading the whole volume (full backup): state file fingerprints are corrupt");
        Images.overwrite(image, 30, BS, 31);
        JsonNode j = backedUp().json();
        assertThat(j.get("mode").asText()).isEqualTo("incremental");
        assertThat(server.sessions.get(2).entryLbns).containsExactly(30L);
        assertRestoresImage("latest");
    }

    @Test
    void backup_foreignStateFile_fullWithReason() throws Exception {
        backedUp();
        Files.write(stateFile(), "this is somebody else's file, not an agent state\n".repeat(10).getBytes());
        AgentRun r = backedUp();
        assertThat(r.json().get("mode").asText()).isEqualTo("full");
        assertThat(r.stderr()).contains("not a Holdfast agent state file");
        assertThat(Files.size(stateFile())).isEqualTo(StateFile.HEADER_BYTES_V2 + BLOCKS * StateFile.ENTRY_BYTES_V2);
    }

    @Test
    void backup_unknownChangeHash_usageErrorAndNothingSent() {
        AgentRun r = AgentRun.of("backup", "--server", server.address(), "--no-tls", "--volume", "vm1",
                "--source", image.toString(), "--state-dir", state.toString(), "--change-hash", "md5");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.stderr()).contains("--change-hash md5").contains("xxh128");
        assertThat(server.sessions).isEmpty();
    }

    /** A file as a SIGKILLed run leaves it: written, unlocked, no longer new. */
    static Path leftover(Path file, int bytes) throws Exception {
        Files.createDirectories(file.getParent());
        Files.write(file, new byte[bytes]);
        Files.setLastModifiedTime(file, FileTime.from(Instant.now().minusSeconds(600)));
        return file;
    }

    @Test
    void backup_leftoverStateOfAKilledBackup_removedAndTheBackupSucceeds_othersAndALiveRunsStay() throws Exception {
        Path sd = stateFile().getParent();
        Path killed = leftover(sd.resolve("vm1.state.4242.tmp"), 48 * 64);
        List<Path> others = List.of(leftover(sd.resolve("vm2.state.4242.tmp"), 100),
                leftover(sd.resolve("vm1.state.4242.tmp.keep"), 100), leftover(sd.resolve(".vol.img.1.holdfast-restore"), 100));
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

        AgentRun next = backup(); // now the killed holder's file is a leftover too
        assertThat(next.exit()).as("%s", next).isZero();
        assertThat(live.file()).doesNotExist();
        assertThat(others).allSatisfy(p -> assertThat(p).exists());
    }

    @Test
    void restore_hiddenLeftoverOfAKilledRestore_removedAndTheRestoreSucceeds_anotherTargetsStays() throws Exception {
        assertThat(backup().exit()).isZero();
        Path target = dir.resolve("out").resolve("vm.img");
        Path killed = leftover(target.resolveSibling(".vm.img.977.holdfast-restore"), 128 * 1024);
        Path otherTarget = leftover(target.resolveSibling(".vm.img2.977.holdfast-restore"), 100);
        Path notOurs = leftover(target.resolveSibling(".vm.img.977.holdfast-restore.part"), 100);

        AgentRun r = restore("latest", target);

        assertThat(r.exit()).as("%s", r).isZero();
        assertThat(Images.sameContent(image, target)).isTrue();
        assertThat(killed).doesNotExist();
        assertThat(r.stderr()).contains("removed " + killed + " (128.0 KiB), left by a restore to " + target);
        assertThat(otherTarget).exists();
        assertThat(notOurs).exists();
    }
}
