package org.holdfast.server.e2e;

import com.github.luben.zstd.Zstd;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.holdfast.server.e2e.VolumeImage.Content;
import org.holdfast.server.e2e.WireProbe.ErrorFrame;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.holdfast.server.e2e.WireProbe.body;

/**
 * Bad input over a real socket to the real server process: each gets a clear error and changes
 * nothing (checked after every test: the server is healthy, the snapshot list is the same, every
 * snapshot restores bit for bit).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BadInputTest {
    private static final int BLOCK = 4096;
    private static final String VICTIM = "victim";
    private static final String MISSING = "no-such-volume";

    private final LogDir logs = new LogDir("BadInputTest");
    private final AgentProcess agent = new AgentProcess(logs);
    private final List<String> ids = new ArrayList<>();
    private final List<Path> expected = new ArrayList<>();
    private ServerProcess server;
    private RestoreCheck restores;
    private Path work;

    @BeforeAll
    void startServerWithTwoSnapshots(@TempDir Path dir) throws Exception {
        work = dir;
        server = ServerProcess.start(dir.resolve("server"), "exact", logs);
        restores = new RestoreCheck(agent, dir);
        Path state = Files.createDirectories(dir.resolve("state"));
        VolumeImage img = VolumeImage.generate(51, 4 << 20);
        for (int i = 0; i < 2; i++) {
            Path file = img.writeTo(dir.resolve("victim-" + i + ".img"));
            ids.add(agent.backup(server, VICTIM, file, state, "--block-size", String.valueOf(BLOCK)).snapshotId());
            expected.add(file);
            img = img.copy(52).fill(0, 64 << 10, Content.RANDOM);
        }
    }

    /**
     * After every bad input: the server lives, the volume lists the same snapshots, and each
     * restores bit for bit, read over the wire by the probe (cheap: no JVM per check). The agent
     * restores them once more at the end.
     */
    @AfterEach
    void nothingChanged() throws Exception {
        assertThat(server.isAlive()).as("server died:\n%s", server.diagnostics()).isTrue();
        assertThat(server.get("/actuator/health").body()).contains("\"UP\"");
        try (WireProbe p = probe()) {
            p.hello();
            assertThat(p.listSnapshots(VICTIM)).extracting(seq -> VICTIM + "@" + seq).containsExactlyElementsOf(ids);
            for (int i = 0; i < ids.size(); i++) {
                assertThat(p.restore(VICTIM, org.holdfast.common.id.SnapshotId.parse(ids.get(i), new org.holdfast.common.id.VolumeId(VICTIM)).sequence()))
                        .as("%s@%s restores bit for bit", VICTIM, ids.get(i)).isEqualTo(Files.readAllBytes(expected.get(i)));
            }
        }
    }

    @AfterAll
    void everySnapshotStillRestoresThroughTheAgentThenStop() {
        if (server == null) {
            return;
        }
        try {
            assertThat(agent.snapshots(server, VICTIM)).extracting(SnapshotInfo::id).containsExactlyElementsOf(ids);
            for (int i = 0; i < ids.size(); i++) {
                restores.assertRestores(server, VICTIM, ids.get(i), expected.get(i), BLOCK);
            }
        } finally {
            server.close();
        }
    }

    // --- malformed frames ---------------------------------------------------------------------

    @Test
    void frame_unknownType_badFrameErrorAndClose() {
        try (WireProbe p = probe()) {
            p.hello();
            p.send(0x7E, new byte[0]);
            assertViolation(p, WireProbe.E_BAD_FRAME);
        }
    }

    @Test
    void frame_unsupportedVersion_versionErrorAndClose() {
        try (WireProbe p = probe()) {
            byte[] hello = body().u32(WireProbe.MAGIC).u16(WireProbe.VERSION).str("e2e").str("").bytes();
            p.raw(ByteBuffer.allocate(6 + hello.length).putInt(2 + hello.length).put((byte) 9)
                    .put((byte) WireProbe.HELLO).put(hello).array());
            assertViolation(p, WireProbe.E_UNSUPPORTED_VERSION, WireProbe.E_BAD_FRAME);
        }
    }

    @Test
    void frame_lengthShorterThanHeader_badFrameErrorAndClose() {
        try (WireProbe p = probe()) {
            p.raw(new byte[] {0, 0, 0, 1, 1});
            assertViolation(p, WireProbe.E_BAD_FRAME);
        }
    }

    @Test
    void frame_truncatedBody_badFrameErrorAndClose() {
        try (WireProbe p = probe()) {
            p.send(WireProbe.HELLO, body().u32(WireProbe.MAGIC).bytes()); // magic only, no version or strings
            assertViolation(p, WireProbe.E_BAD_FRAME);
        }
    }

    @Test
    void frame_stringLengthPastEndOfBody_badFrameErrorAndClose() {
        try (WireProbe p = probe()) {
            p.send(WireProbe.HELLO, body().u32(WireProbe.MAGIC).u16(WireProbe.VERSION).u16(200).raw("abc".getBytes(StandardCharsets.UTF_8)).bytes());
            assertViolation(p, WireProbe.E_BAD_FRAME);
        }
    }

    @Test
    void frame_wrongMagic_errorAndClose() {
        try (WireProbe p = probe()) {
            p.send(WireProbe.HELLO, body().u32(0x12345678).u16(WireProbe.VERSION).str("e2e").str("").bytes());
            assertViolation(p, WireProbe.E_BAD_FRAME, WireProbe.E_UNSUPPORTED_VERSION);
        }
    }

    @Test
    void frame_httpRequestOnIngestPort_errorAndClose() {
        // "GET " read as a length is 1.2 GB: over MAX_FRAME, refused before any allocation.
        try (WireProbe p = probe()) {
            p.raw("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            assertViolation(p, WireProbe.E_LIMIT_EXCEEDED, WireProbe.E_BAD_FRAME);
        }
    }

    @Test
    void frame_backupBeforeHello_errorAndClose() {
        try (WireProbe p = probe()) {
            p.send(WireProbe.BACKUP_BEGIN, body().str(VICTIM).u32(BLOCK).u64(1 << 20).u64(0).bytes());
            assertViolation(p, WireProbe.E_BAD_STATE, WireProbe.E_BAD_FRAME, 10);
        }
    }

    // --- oversized frames and fields ----------------------------------------------------------

    @Test
    void frame_overMaxFrame_limitErrorWithoutWaitingForBody() {
        try (WireProbe p = probe()) {
            p.hello();
            p.raw(ByteBuffer.allocate(6).putInt(WireProbe.MAX_FRAME + 1).put((byte) 1).put((byte) WireProbe.BLOCKS).array());
            assertViolation(p, WireProbe.E_LIMIT_EXCEEDED, WireProbe.E_BAD_FRAME);
        }
    }

    @Test
    void hello_agentNameOverLimit_limitErrorAndClose() {
        try (WireProbe p = probe()) {
            p.send(WireProbe.HELLO, body().u32(WireProbe.MAGIC).u16(WireProbe.VERSION).str("a".repeat(257)).str("").bytes());
            assertViolation(p, WireProbe.E_LIMIT_EXCEEDED, WireProbe.E_BAD_FRAME);
        }
    }

    @Test
    void backupBegin_volumeNameOverLimit_limitErrorAndClose() {
        try (WireProbe p = probe()) {
            p.hello();
            p.send(WireProbe.BACKUP_BEGIN, body().str("v".repeat(129)).u32(BLOCK).u64(1 << 20).u64(0).bytes());
            assertViolation(p, WireProbe.E_LIMIT_EXCEEDED, WireProbe.E_BAD_FRAME);
        }
        assertThat(server.get("/api/v1/volumes/" + "v".repeat(129) + "/snapshots").statusCode()).isNotEqualTo(200);
    }

    @Test
    void entries_countOverLimit_limitErrorAndClose() {
        try (WireProbe p = probe()) {
            beginBackup(p, VICTIM, 64 << 20);
            // 164 KB, refused on its header while still being written: the server drains the rest
            // (docs/protocol.md, after a refused frame), so the write completes and the ERROR is read
            p.send(WireProbe.ENTRIES, body().u64(0).u32(4097).raw(new byte[4097 * 40]).bytes());
            assertViolation(p, WireProbe.E_LIMIT_EXCEEDED, WireProbe.E_BAD_FRAME);
        }
    }

    @Test
    void blocks_rawPayloadLongerThanBlockSize_errorAndClose() {
        byte[] data = randomBlock(61);
        try (WireProbe p = probe()) {
            beginBackup(p, VICTIM, 1 << 20);
            assertNeeded(p, data);
            p.send(WireProbe.BLOCKS, body().u32(1).u64(0).u8(1).u32(2 * BLOCK).raw(data).raw(data).bytes());
            assertViolation(p, WireProbe.E_LIMIT_EXCEEDED, WireProbe.E_BAD_FRAME);
        }
    }

    @Test
    void blocks_zstdPayloadInflatingPastBlockSize_errorAndClose() {
        // 1 MiB of zeros compresses to a few dozen bytes: a small frame asking for a big allocation.
        byte[] bomb = Zstd.compress(new byte[1 << 20]);
        byte[] data = randomBlock(62);
        try (WireProbe p = probe()) {
            beginBackup(p, VICTIM, 1 << 20);
            assertNeeded(p, data);
            p.send(WireProbe.BLOCKS, body().u32(1).u64(0).u8(2).u32(bomb.length).raw(bomb).bytes());
            assertViolation(p, WireProbe.E_LIMIT_EXCEEDED, WireProbe.E_BAD_FRAME, WireProbe.E_FINGERPRINT_MISMATCH);
        }
    }

    // --- lying payloads and bad state ---------------------------------------------------------

    @Test
    void blocks_payloadNotMatchingFingerprint_mismatchErrorAndTheFingerprintStaysUnknown() throws Exception {
        byte[] announced = randomBlock(71);
        byte[] sent = randomBlock(72);
        try (WireProbe p = probe()) {
            beginBackup(p, VICTIM, 1 << 20);
            assertNeeded(p, announced);
            p.send(WireProbe.BLOCKS, body().u32(1).u64(0).u8(1).u32(BLOCK).raw(sent).bytes());
            ErrorFrame e = p.expectError();
            assertThat(e.code()).as("error %s", e).isEqualTo(WireProbe.E_FINGERPRINT_MISMATCH);
            assertThat(e.message()).isNotBlank();
            assertThat(p.closedByServer()).as("session ends after a mismatch").isTrue();
        }
        // Had the server kept the lying payload under the announced fingerprint, a real volume
        // holding the announced block would now dedup against it and restore the wrong bytes.
        byte[] volume = new byte[4 * BLOCK];
        System.arraycopy(announced, 0, volume, BLOCK, BLOCK);
        System.arraycopy(sent, 0, volume, 3 * BLOCK, BLOCK);
        Path file = Files.write(work.resolve("after-mismatch.img"), volume);
        BackupSummary s = agent.backup(server, "after-mismatch", file,
                Files.createDirectories(work.resolve("state-after-mismatch")), "--block-size", String.valueOf(BLOCK));
        restores.assertRestores(server, "after-mismatch", s.snapshotId(), file, BLOCK);
    }

    @Test
    void commit_beforeNeededBlocksArrive_badStateAndNoSnapshot() {
        try (WireProbe p = probe()) {
            beginBackup(p, VICTIM, 1 << 20);
            assertNeeded(p, randomBlock(81));
            p.send(WireProbe.COMMIT, body().u64(1 << 20).bytes());
            ErrorFrame e = p.expectError();
            assertThat(e.code()).as("error %s", e).isEqualTo(WireProbe.E_BAD_STATE);
            assertThat(e.message()).isNotBlank();
        }
    }

    @Test
    void entries_lbnPastVolumeEnd_errorAndNoSnapshot() {
        try (WireProbe p = probe()) {
            beginBackup(p, VICTIM, 4 * BLOCK);
            p.send(WireProbe.ENTRIES, body().u64(4).u32(1).raw(sha256(randomBlock(82))).u64(0).bytes());
            ErrorFrame e = p.expectError();
            assertThat(e.message()).as("error %s", e).isNotBlank();
        }
    }

    @Test
    void backupBegin_blockSizeOfExistingVolumeDiffers_blockSizeMismatch() {
        try (WireProbe p = probe()) {
            p.hello();
            p.send(WireProbe.BACKUP_BEGIN, body().str(VICTIM).u32(2 * BLOCK).u64(1 << 20).u64(0).bytes());
            ErrorFrame e = p.expectError();
            assertThat(e.code()).as("error %s", e).isEqualTo(11);
        }
    }

    // --- unknown volume and snapshot ----------------------------------------------------------

    @Test
    void listSnapshots_unknownVolume_unknownVolumeError() {
        try (WireProbe p = probe()) {
            p.hello();
            p.send(WireProbe.LIST_SNAPSHOTS, body().str(MISSING).bytes());
            ErrorFrame e = p.expectError();
            assertThat(e.code()).as("error %s", e).isEqualTo(WireProbe.E_UNKNOWN_VOLUME);
            assertThat(e.message()).contains(MISSING);
        }
    }

    @Test
    void restore_unknownVolume_unknownVolumeError() {
        try (WireProbe p = probe()) {
            p.hello();
            p.send(WireProbe.RESTORE, body().str(MISSING).u64(1).u64(0).bytes());
            ErrorFrame e = p.expectError();
            assertThat(e.code()).as("error %s", e).isEqualTo(WireProbe.E_UNKNOWN_VOLUME);
        }
    }

    @Test
    void restore_unknownSnapshot_unknownSnapshotError() {
        try (WireProbe p = probe()) {
            p.hello();
            p.send(WireProbe.RESTORE, body().str(VICTIM).u64(999_999).u64(0).bytes());
            ErrorFrame e = p.expectError();
            assertThat(e.code()).as("error %s", e).isEqualTo(WireProbe.E_UNKNOWN_SNAPSHOT);
        }
    }

    @Test
    void agentSnapshots_unknownVolume_exitNonZeroWithOneLineReason() {
        AgentResult r = agent.run("snapshots", "--server", server.ingestAddress(), "--volume", MISSING, "--json",
                "--fingerprint", server.fingerprint().toString());
        assertOneLineFailure(r, MISSING);
    }

    @Test
    void agentRestore_unknownVolume_exitNonZeroWithOneLineReasonAndNoTarget() {
        Path target = work.resolve("unknown-volume.img");
        AgentResult r = agent.run(AgentProcess.restoreArgs(server, MISSING, ids.get(0), target));
        assertOneLineFailure(r, MISSING);
        assertThat(target).as("a failed restore leaves no target file").doesNotExist();
    }

    @Test
    void agentRestore_unknownSnapshot_exitNonZeroWithOneLineReasonAndNoTarget() {
        Path target = work.resolve("unknown-snapshot.img");
        AgentResult r = agent.run(AgentProcess.restoreArgs(server, VICTIM, "999999", target));
        assertOneLineFailure(r, "999999");
        assertThat(target).as("a failed restore leaves no target file").doesNotExist();
    }

    @Test
    void agentBackup_serverNotListening_exitNonZeroWithOneLineReason() throws Exception {
        Path file = VolumeImage.generate(91, 1 << 20).writeTo(work.resolve("unreachable.img"));
        AgentResult r = agent.run("backup", "--server", "127.0.0.1:1", "--volume", "unreachable", "--source",
                file.toString(), "--state-dir", Files.createDirectories(work.resolve("state-unreachable")).toString(), "--json");
        assertOneLineFailure(r, "127.0.0.1:1");
    }

    @Test
    void restApi_unknownVolume_notFoundProblemDetail() {
        HttpResponse<String> r = server.get("/api/v1/volumes/" + MISSING + "/snapshots");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(404);
        assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(
                ct -> assertThat(ct).contains("application/problem+json"));
    }

    // --- helpers ------------------------------------------------------------------------------

    private WireProbe probe() {
        return new WireProbe(server.ingestPort(), server.clientTls(), server.agentToken());
    }

    private static void assertViolation(WireProbe p, int... allowedCodes) {
        ErrorFrame e = p.expectError();
        assertThat(e.code()).as("error %s", e).isIn(java.util.Arrays.stream(allowedCodes).boxed().toList());
        assertThat(e.message()).as("error %s", e).isNotBlank();
        assertThat(p.closedByServer()).as("the server closes the connection after a protocol violation").isTrue();
    }

    private static void assertOneLineFailure(AgentResult r, String mentioned) {
        assertThat(r.exitCode()).as("%s", r).isNotZero();
        assertThat(r.stderrLines()).as("one line on stderr: %s", r).hasSize(1);
        assertThat(r.stderrLines().get(0)).as("%s", r).contains(mentioned).doesNotContain("Exception");
    }

    /** HELLO, then BACKUP_BEGIN for a volume of {@code volumeBytes}; returns after BACKUP_READY. */
    private static void beginBackup(WireProbe p, String volume, long volumeBytes) {
        p.hello();
        p.send(WireProbe.BACKUP_BEGIN, body().str(volume).u32(BLOCK).u64(volumeBytes).u64(0).bytes());
        WireProbe.Frame ready = p.expect(WireProbe.BACKUP_READY);
        ByteBuffer b = ready.buffer();
        b.getLong(); // session id
        b.getLong(); // parent sequence
        assertThat(b.getInt()).as("block size in BACKUP_READY").isEqualTo(BLOCK);
    }

    /** Announces {@code block} at LBN 0 and checks the server asks for it. */
    private static void assertNeeded(WireProbe p, byte[] block) {
        p.send(WireProbe.ENTRIES, body().u64(0).u32(1).raw(sha256(block)).u64(0).bytes());
        ByteBuffer need = p.expect(WireProbe.NEED).buffer();
        assertThat(need.getLong()).isZero();
        assertThat(need.getInt()).isEqualTo(1);
        assertThat(need.get() & 1).as("server asks for the payload of a block it has never seen").isEqualTo(1);
    }

    private static byte[] randomBlock(long seed) {
        byte[] b = new byte[BLOCK];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static byte[] sha256(byte[] b) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(b);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
