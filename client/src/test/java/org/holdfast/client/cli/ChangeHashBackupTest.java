package org.holdfast.client.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;
import org.holdfast.client.AgentRun;
import org.holdfast.client.FakeServer;
import org.holdfast.client.Images;
import org.holdfast.client.LeakWatch;
import org.holdfast.client.scan.StateFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The agent's cheap change hash (--change-hash, --rehash-every) end to end, against an in-process protocol peer. */
class ChangeHashBackupTest {
    static final int BS = 4096;
    static final long SIZE = 2 * 1024 * 1024 + 1000;
    static final int BLOCKS = (int) ((SIZE + BS - 1) / BS);

    @TempDir
    Path dir;
    FakeServer server;
    Path image;
    Path state;

    @BeforeEach
    void start() throws Exception {
        server = new FakeServer();
        image = Images.create(dir.resolve("vol.img"), SIZE, BS, 3, 7);
        state = dir.resolve("state");
    }

    @AfterEach
    void stop() {
        server.close();
        LeakWatch.assertNoLeaks();
    }

    private AgentRun backup(String... extra) {
        List<String> a = new ArrayList<>(List.of("backup", "--server", server.address(), "--no-tls", "--volume", "vm1",
                "--source", image.toString(), "--state-dir", state.toString(), "--json"));
        a.addAll(List.of(extra));
        AgentRun r = AgentRun.of(a.toArray(String[]::new));
        assertThat(r.exit()).as("%s", r).isZero();
        return r;
    }

    private Path stateFile() {
        return StateFile.path(state, "127.0.0.1_" + server.address().split(":")[1], "vm1");
    }

    private void assertLatestRestores() {
        Path target = dir.resolve("r" + System.nanoTime() + ".img");
        AgentRun r = AgentRun.of("restore", "--server", server.address(), "--no-tls", "--volume", "vm1",
                "--snapshot", "latest", "--target", target.toString(), "--json");
        assertThat(r.exit()).as("%s", r).isZero();
        try {
            assertThat(Images.sameContent(image, target)).isTrue();
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void backup_seededChanges_everyChangedBlockSentAndOnlyThoseSha256Hashed() throws Exception {
        backup();
        Random rnd = new Random(14);
        for (int round = 1; round <= 4; round++) {
            byte[] before = Files.readAllBytes(image);
            try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "rw")) {
                for (int i = 0; i < 12; i++) {
                    int lbn = rnd.nextInt(BLOCKS);
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
            JsonNode j = backup().json();
            assertThat(j.get("mode").asText()).isEqualTo("incremental");
            assertThat(j.get("changeHash").asText()).isEqualTo("xxh128");
            assertThat(j.get("rehashReason").isNull()).as("round %d: %s", round, j).isTrue();
            assertThat(server.sessions.get(round).entryLbns).as("round %d", round).containsExactlyElementsOf(changed);
            assertThat(j.get("sha256Blocks").asLong()).as("round %d", round).isEqualTo(nonZeroChanged);
            assertLatestRestores();
        }
    }

    @Test
    void backup_rehashEvery3_everyThirdBackupHashesEveryBlock() throws Exception {
        long nonZero = BLOCKS - (BLOCKS + 6) / 7;
        List<String> reasons = new ArrayList<>();
        List<Long> hashed = new ArrayList<>();
        for (int i = 1; i <= 5; i++) {
            Images.overwrite(image, 8 * i + 1, BS, 500 + i); // never a zero block (every 7th)
            JsonNode j = backup("--rehash-every", "3").json();
            reasons.add(j.get("rehashReason").isNull() ? null : j.get("rehashReason").asText());
            hashed.add(j.get("sha256Blocks").asLong());
            assertThat(server.sessions.get(i - 1).entryLbns).hasSize(i == 1 ? BLOCKS : 1);
        }
        assertThat(reasons.get(0)).isEqualTo("full backup");
        assertThat(reasons.get(1)).isNull();
        assertThat(reasons.get(2)).isNull();
        assertThat(reasons.get(3)).contains("backup 3 since the last full re-hash");
        assertThat(reasons.get(4)).isNull();
        assertThat(hashed).containsExactly(nonZero, 1L, 1L, nonZero, 1L);
        assertLatestRestores();
    }

    @Test
    void backup_sha256ThenXxh128_formatOneStateReadAndUpgraded() throws Exception {
        JsonNode first = backup("--change-hash", "sha256").json();
        assertThat(first.get("changeHash").asText()).isEqualTo("sha256");
        assertThat(Files.size(stateFile())).isEqualTo(StateFile.HEADER_BYTES + BLOCKS * 32L);

        Images.overwrite(image, 20, BS, 9);
        JsonNode second = backup().json();
        assertThat(second.get("mode").asText()).isEqualTo("incremental");
        assertThat(second.get("rehashReason").asText()).contains("no cheap hashes");
        assertThat(server.sessions.get(1).entryLbns).containsExactly(20L);
        assertThat(Files.size(stateFile())).isEqualTo(StateFile.HEADER_BYTES_V2 + BLOCKS * (long) StateFile.ENTRY_BYTES_V2);

        Images.overwrite(image, 21, BS, 10);
        JsonNode third = backup().json();
        assertThat(third.get("rehashReason").isNull()).isTrue();
        assertThat(third.get("sha256Blocks").asLong()).isEqualTo(1);
        assertThat(server.sessions.get(2).entryLbns).containsExactly(21L);
        assertLatestRestores();
    }

    @Test
    void backup_corruptChangeHashInState_fullWithReasonThenRebuilt() throws Exception {
        backup();
        try (RandomAccessFile f = new RandomAccessFile(stateFile().toFile(), "rw")) {
            long at = StateFile.HEADER_BYTES_V2 + StateFile.ENTRY_BYTES_V2 * 10L + 40; // inside LBN 10's cheap hash
            f.seek(at);
            int b = f.read();
            f.seek(at);
            f.write(b ^ 0x04);
        }
        AgentRun r = backup();
        assertThat(r.json().get("mode").asText()).isEqualTo("full");
        assertThat(r.stderr()).contains("reading the whole volume (full backup): state file fingerprints are corrupt");
        Images.overwrite(image, 30, BS, 31);
        JsonNode j = backup().json();
        assertThat(j.get("mode").asText()).isEqualTo("incremental");
        assertThat(server.sessions.get(2).entryLbns).containsExactly(30L);
        assertLatestRestores();
    }

    @Test
    void backup_foreignStateFile_fullWithReason() throws Exception {
        backup();
        Files.write(stateFile(), "this is somebody else's file, not an agent state\n".repeat(10).getBytes());
        AgentRun r = backup();
        assertThat(r.json().get("mode").asText()).isEqualTo("full");
        assertThat(r.stderr()).contains("not a Holdfast agent state file");
        assertThat(Files.size(stateFile())).isEqualTo(StateFile.HEADER_BYTES_V2 + BLOCKS * (long) StateFile.ENTRY_BYTES_V2);
    }

    @Test
    void backup_unknownChangeHash_usageErrorAndNothingSent() {
        AgentRun r = AgentRun.of("backup", "--server", server.address(), "--no-tls", "--volume", "vm1",
                "--source", image.toString(), "--state-dir", state.toString(), "--change-hash", "md5");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.stderr()).contains("--change-hash md5").contains("xxh128");
        assertThat(server.sessions).isEmpty();
    }
}
