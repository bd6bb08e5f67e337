package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bit rot end to end: a real server process, the real agent, real data logs rotted on disk (one
 * record in seven, raw and zstd-compressed ones, in the stored bytes, the compressed frame's end or
 * the record header). The agent's restore fails with exit 6 naming the block; a verify job finds every damaged block and
 * flags the volume; the volume's next ordinary backup is made full by the server and repairs them; after a restart
 * every snapshot restores byte-identical and verify is clean.
 */
class BitRotE2eTest {
    private static final LogDir logs = new LogDir("BitRotE2eTest");
    private static final int BS = 4096;
    private static final int RECORD_HEADER = 32;
    private static final int LOG_HEADER = 32;

    @TempDir
    Path dir;

    private final ObjectMapper json = new ObjectMapper();

    /**
     * Flips one byte of every {@code every}-th block record and of every frame record of the data logs, at a place that changes from
     * record to record: inside the stored bytes (for a zstd record or a frame: inside its compressed
     * bytes), the last stored byte, or the record header (its PBN field). Returns how many blocks were
     * damaged (every member of a damaged frame) and counts the damaged records per kind in
     * {@code perKind} (index 1 raw block, 2 zstd block, 3 compressed frame).
     */
    private static int rot(Path dataDir, int every, int[] perKind) throws IOException {
        List<Path> files;
        try (Stream<Path> s = Files.list(dataDir)) {
            files = s.filter(p -> p.getFileName().toString().matches("log-[0-9a-f]{8}\\.hfl")).sorted().toList();
        }
        int flipped = 0;
        int damaged = 0;
        int seen = 0;
        for (Path f : files) {
            try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                long pos = LOG_HEADER;
                ByteBuffer h = ByteBuffer.allocate(RECORD_HEADER);
                while (pos + RECORD_HEADER <= ch.size()) {
                    h.clear();
                    ch.read(h, pos);
                    int magic = h.getInt(0);
                    if (magic != 0x48464252 && magic != 0x48464652) { // HFBR block, HFFR frame
                        break;
                    }
                    boolean frame = magic == 0x48464652;
                    int stored = h.getInt(20);
                    if (seen++ % every == 0 || frame) {
                        long at = switch (flipped % 3) {
                            case 0 -> pos + RECORD_HEADER + stored / 3;
                            case 1 -> pos + RECORD_HEADER + stored - 1;
                            default -> pos + 12; // a byte of the record's (first) PBN: the header checksum fails
                        };
                        ByteBuffer one = ByteBuffer.allocate(1);
                        ch.read(one, at);
                        one.put(0, (byte) (one.get(0) ^ 0x40)).rewind();
                        ch.write(one, at);
                        perKind[frame ? 3 : h.get(4) & 3]++;
                        flipped++;
                        damaged += frame ? h.getShort(6) & 0xffff : 1;
                    }
                    pos += RECORD_HEADER + stored;
                }
            }
        }
        return damaged;
    }

    private JsonNode get(ServerProcess server, String path) throws IOException {
        var r = server.get(path);
        assertThat(r.statusCode()).as(path + ": " + r.body()).isEqualTo(200);
        return json.readTree(r.body());
    }

    @Test
    void bitRot_realServerAndAgent_detectedReportedAndRepairedByABackup() throws Exception {
        byte[] image = new byte[256 * BS];
        new Random(77).nextBytes(image);
        for (int i = 128; i < 256; i++) {
            // the second half compresses: the agent sends it as compressed frames; the first half goes as raw blocks
            java.util.Arrays.fill(image, i * BS + 64, (i + 1) * BS, (byte) i);
        }
        Path source = Files.write(dir.resolve("source.img"), image);
        AgentProcess agent = new AgentProcess(logs);
        try (ServerProcess server = ServerProcess.start(dir.resolve("server"), "sungem",
                Map.of("holdfast.verify.schedule", "0", "holdfast.verify.window", "0"), logs)) {
            BackupSummary first = agent.backup(server, "vm", source, Files.createDirectories(dir.resolve("state-vm")));
            int[] perKind = new int[4];
            int flipped = rot(server.dataDir().resolve("data"), 7, perKind);
            assertThat(flipped).isGreaterThanOrEqualTo(30);
            assertThat(perKind[1]).as("raw records damaged").isGreaterThanOrEqualTo(10);
            assertThat(perKind[3]).as("compressed frames damaged").isPositive();

            // the agent's restore stops at the damaged block: exit 6, and the message names it
            Path target = dir.resolve("restored.img");
            AgentResult failed = agent.run(AgentProcess.restoreArgs(server, "vm", first.snapshotId(), target));
            assertThat(failed.exitCode()).as("%s", failed).isEqualTo(6);
            assertThat(failed.stderr()).contains("CORRUPT_DATA").contains("log-").contains("pbn ")
                    .contains("snapshot " + first.snapshotId()).contains("LBN ");
            assertThat(target).as("no wrong bytes written to the target").doesNotExist();
            assertThat(server.log()).contains("bad blocks marked: ");

            // verify finds every damaged block and flags the volume
            JsonNode job = server.runJob("/api/v1/verify", Duration.ofMinutes(2));
            assertThat(job.path("state").asText()).as(job.toString()).isEqualTo("succeeded");
            assertThat(job.path("result").path("badBlocks").asInt()).as(job.toString()).isEqualTo(flipped);
            assertThat(get(server, "/api/v1/volumes/vm").path("damaged").asBoolean()).isTrue();
            assertThat(get(server, "/api/v1/verify").path("badBlockCount").asInt()).isEqualTo(flipped);
            assertThat(server.get("/actuator/health").body()).contains("DEGRADED");
            assertThat(server.get("/actuator/prometheus").body()).contains("holdfast_verify_bad_blocks " + flipped + ".0");

            // the volume's next ordinary backup (current state file, unchanged source) is made full by the server and repairs them
            BackupSummary next = agent.backup(server, "vm", source, dir.resolve("state-vm"));
            assertThat(next.json().path("mode").asText()).as("%s", next).isEqualTo("full");
            // the server says why (protocol 5's reason byte), so the agent names the damaged blocks alone
            assertThat(next.json().path("fullReason").asText()).contains("newest snapshot " + first.snapshotId() + " references damaged blocks")
                    .doesNotContain("identity");
            assertThat(next.run().stderr()).contains("reading the whole volume (full backup): the server asked for a full backup");
            assertThat(next.sentBlocks()).as("%s", next).isGreaterThanOrEqualTo(flipped);
            assertThat(get(server, "/api/v1/verify").path("badBlockCount").asInt()).isZero();
            assertThat(get(server, "/api/v1/volumes/vm").path("damaged").asBoolean()).isFalse();
            assertThat(server.log()).contains("damaged blocks; asking the agent for a full backup");
            BackupSummary after = agent.backup(server, "vm", source, dir.resolve("state-vm"));
            assertThat(after.json().path("mode").asText()).as("repaired: incremental again, %s", after).isEqualTo("incremental");
            // the healthy source backed up into a new volume finds every block sound: nothing to upload
            BackupSummary repair = agent.backup(server, "vm-copy", source, Files.createDirectories(dir.resolve("state-copy")));

            server.close();
            server.start();
            for (String[] s : new String[][] {{"vm", first.snapshotId()}, {"vm", next.snapshotId()}, {"vm-copy", repair.snapshotId()}}) {
                Path out = dir.resolve(s[1] + ".restored");
                agent.restore(server, s[0], s[1], out);
                assertThat(Files.readAllBytes(out)).as("%s restores byte-identical after the repair and a restart", s[1])
                        .isEqualTo(image);
            }
            JsonNode clean = server.runJob("/api/v1/verify", Duration.ofMinutes(2));
            assertThat(clean.path("result").path("badBlocks").asInt()).as(clean.toString()).isZero();
            assertThat(server.get("/actuator/health").body()).contains("\"UP\"");
        }
    }
}
