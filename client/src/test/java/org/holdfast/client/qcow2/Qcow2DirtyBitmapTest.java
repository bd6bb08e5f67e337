package org.holdfast.client.qcow2;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.holdfast.client.AgentRun;
import org.holdfast.client.FakeServer;
import org.holdfast.client.Images;
import org.holdfast.client.LeakWatch;
import org.holdfast.client.cli.HoldfastAgent;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * qcow2 images with real qemu-img, qemu-io, qemu-nbd and nbdinfo: dirty-bitmap incrementals read
 * only the dirty extents, every snapshot restores byte-identical to {@code qemu-img convert -O raw},
 * a broken chain falls back to a full read, and a failed or killed run keeps the old bitmap.
 */
class Qcow2DirtyBitmapTest {
    static final long SIZE = 16 << 20;
    static final long K64 = 64 << 10;
    /** What the image holds besides zeros (written in start()): a full read reads only this. */
    static final long DATA = 5 << 20;

    @TempDir
    Path dir;
    FakeServer server;
    Path image;

    @BeforeAll
    static void tools() {
        for (String t : List.of("qemu-img", "qemu-io", "qemu-nbd", "nbdinfo")) {
            assumeTrue(onPath(t), t + " is not installed (apt-get install qemu-utils libnbd-bin)");
        }
    }

    static boolean onPath(String tool) {
        for (String d : System.getenv("PATH").split(File.pathSeparator)) {
            if (Files.isExecutable(Path.of(d, tool))) {
                return true;
            }
        }
        return false;
    }

    @BeforeEach
    void start() throws Exception {
        server = new FakeServer();
        image = dir.resolve("disk.qcow2");
        run("qemu-img", "create", "-q", "-f", "qcow2", image.toString(), String.valueOf(SIZE));
        write(0x11, 0, 4 << 20);
        write(0x22, 8 << 20, 1 << 20);
    }

    @AfterEach
    void stop() {
        server.close();
        LeakWatch.assertNoLeaks();
    }

    List<String> backupArgs() {
        return new ArrayList<>(List.of("backup", "--server", server.address(), "--no-tls", "--volume", "vm1",
                "--source", image.toString(), "--state-dir", dir.resolve("state").toString(), "--dirty-bitmap", "--json"));
    }

    JsonNode backup() {
        AgentRun r = AgentRun.of(backupArgs().toArray(String[]::new));
        assertThat(r.exit()).as("%s", r).isZero();
        return r.json();
    }

    void write(int pattern, long offset, long length) throws Exception {
        run("qemu-io", "-c", "write -P " + pattern + " " + offset + " " + length, image.toString());
    }

    /** Restores {@code seq} and compares it with the image's guest view as qemu-img converts it now. */
    void assertRestoresIdentical(long seq) throws Exception {
        Path raw = dir.resolve("expected-" + seq + ".raw");
        run("qemu-img", "convert", "-O", "raw", image.toString(), raw.toString());
        Path target = dir.resolve("restored-" + seq + ".raw");
        AgentRun rr = AgentRun.of("restore", "--server", server.address(), "--no-tls", "--volume", "vm1",
                "--snapshot", String.valueOf(seq), "--target", target.toString(), "--json");
        assertThat(rr.exit()).as("%s", rr).isZero();
        assertThat(Images.sameContent(raw, target)).as("snapshot %d equals qemu-img convert -O raw", seq).isTrue();
    }

    List<String> holdfastBitmaps() throws Exception {
        List<String> names = new ArrayList<>();
        for (QemuImg.Bitmap b : QemuImg.info(image).bitmaps()) {
            if (b.name().startsWith("holdfast-")) {
                names.add(b.name());
            }
        }
        return names;
    }

    @Test
    void incrementals_readOnlyTheDirtyExtents_andRestoreByteIdentical() throws Exception {
        JsonNode first = backup();
        assertThat(first.get("mode").asText()).isEqualTo("full");
        assertThat(first.get("dirtyBitmapUsed").asBoolean()).isFalse();
        assertThat(first.get("sourceBytesRead").asLong()).as("zero clusters are skipped").isEqualTo(DATA);
        assertThat(first.get("holeBytes").asLong()).isEqualTo(SIZE - DATA);
        assertThat(holdfastBitmaps()).containsExactly(first.get("dirtyBitmapNext").asText());
        assertRestoresIdentical(1);

        write(0xab, 1 << 20, K64);
        JsonNode second = backup();
        assertThat(second.get("mode").asText()).isEqualTo("incremental");
        assertThat(second.get("dirtyBitmapUsed").asBoolean()).isTrue();
        assertThat(second.get("dirtyBitmapRead").asText()).isEqualTo(first.get("dirtyBitmapNext").asText());
        assertThat(second.get("sourceBytesRead").asLong()).isEqualTo(K64);
        assertThat(second.get("changedBlocks").asLong()).isEqualTo(K64 / 4096);
        assertThat(holdfastBitmaps()).as("the old bitmap goes after the commit").containsExactly(second.get("dirtyBitmapNext").asText());
        assertRestoresIdentical(2);

        write(0xcd, 5 << 20, K64);
        write(0xef, 12 << 20, 2 * K64); // in a region never written before
        JsonNode third = backup();
        assertThat(third.get("dirtyBitmapUsed").asBoolean()).isTrue();
        assertThat(third.get("sourceBytesRead").asLong()).isEqualTo(3 * K64);
        assertRestoresIdentical(3);
    }

    @Test
    void removedBitmap_fallsBackToAFullRead_andTheChainResumes() throws Exception {
        JsonNode first = backup();
        write(0xab, 1 << 20, K64);
        run("qemu-img", "bitmap", "--remove", image.toString(), first.get("dirtyBitmapNext").asText());
        AgentRun r = AgentRun.of(backupArgs().toArray(String[]::new));
        assertThat(r.exit()).as("%s", r).isZero();
        assertThat(r.stderr()).contains("dirty bitmap not used, reading the whole image").contains("is missing from the image");
        JsonNode second = r.json();
        assertThat(second.get("dirtyBitmapUsed").asBoolean()).isFalse();
        assertThat(second.get("dirtyBitmapFallback").asText()).contains("missing");
        assertThat(second.get("sourceBytesRead").asLong()).isEqualTo(DATA);
        assertThat(second.get("changedBlocks").asLong()).as("still compared block by block").isEqualTo(K64 / 4096);
        assertRestoresIdentical(2);

        write(0xcd, 2 << 20, K64);
        JsonNode third = backup();
        assertThat(third.get("dirtyBitmapUsed").asBoolean()).isTrue();
        assertThat(third.get("sourceBytesRead").asLong()).isEqualTo(K64);
        assertRestoresIdentical(3);
    }

    @Test
    void inconsistentBitmap_fallsBackToAFullRead() throws Exception {
        backup();
        // a writer that dies with the image open leaves its bitmaps flagged in-use: they may miss writes
        ProcessBuilder pb = new ProcessBuilder("qemu-io", "-c", "write -P 0x5a 3M 64k", "-c", "sigraise 9", image.toString())
                .redirectErrorStream(true);
        Process p = pb.start();
        p.getInputStream().readAllBytes();
        assertThat(p.waitFor()).as("qemu-io killed itself").isNotZero();
        JsonNode second = backup();
        assertThat(second.get("dirtyBitmapUsed").asBoolean()).isFalse();
        assertThat(second.get("dirtyBitmapFallback").asText()).contains("inconsistent");
        assertThat(second.get("sourceBytesRead").asLong()).isEqualTo(DATA);
        assertRestoresIdentical(2);
        assertThat(holdfastBitmaps()).as("the inconsistent bitmap is dropped after the commit")
                .containsExactly(second.get("dirtyBitmapNext").asText());
    }

    @Test
    void tornOrForeignBitmapRecord_fallsBackToAFullRead() throws Exception {
        backup();
        Path record = Files.list(dir.resolve("state")).findFirst().orElseThrow().resolve("vm1.state.bitmap");
        String text = Files.readString(record);
        Files.writeString(record, text.substring(0, text.length() / 2));
        write(0xab, 1 << 20, K64);
        JsonNode second = backup();
        assertThat(second.get("dirtyBitmapUsed").asBoolean()).isFalse();
        assertThat(second.get("dirtyBitmapFallback").asText()).contains("torn");
        assertThat(second.get("sourceBytesRead").asLong()).isEqualTo(DATA);
        assertRestoresIdentical(2);

        // the same volume pointed at a copy of the image (bitmaps and all) is another image
        Path copy = dir.resolve("copy.qcow2");
        Files.copy(image, copy);
        image = copy;
        write(0xcd, 2 << 20, K64);
        JsonNode third = backup();
        assertThat(third.get("dirtyBitmapUsed").asBoolean()).isFalse();
        assertThat(third.get("dirtyBitmapFallback").asText()).contains("belongs to image");
        assertRestoresIdentical(3);
    }

    @Test
    void sizeChanged_fallsBackToAFullRead() throws Exception {
        backup();
        run("qemu-img", "resize", "-q", image.toString(), String.valueOf(SIZE + (4 << 20)));
        JsonNode second = backup();
        assertThat(second.get("mode").asText()).isEqualTo("full");
        assertThat(second.get("dirtyBitmapUsed").asBoolean()).isFalse();
        assertThat(second.get("sourceBytesRead").asLong()).isEqualTo(DATA);
        assertThat(second.get("logicalBytes").asLong()).isEqualTo(SIZE + (4 << 20));
        assertRestoresIdentical(2);
    }

    @Test
    void agentKilledBetweenReadingAndCommit_keepsTheOldBitmap() throws Exception {
        JsonNode first = backup();
        String old = first.get("dirtyBitmapNext").asText();
        write(0xab, 1 << 20, K64);

        server.stallCommit = true;
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), HoldfastAgent.class.getName()));
        cmd.addAll(backupArgs());
        Process agent = new ProcessBuilder(cmd).redirectErrorStream(true)
                .redirectOutput(dir.resolve("killed-agent.log").toFile()).start();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (server.stalledCommits.get() == 0 && agent.isAlive() && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertThat(server.stalledCommits.get()).as("the agent read everything and asked to commit: %s",
                Files.readString(dir.resolve("killed-agent.log"), StandardCharsets.UTF_8)).isEqualTo(1);
        agent.destroyForcibly(); // SIGKILL
        agent.waitFor();
        server.stallCommit = false;
        assertThat(holdfastBitmaps()).as("the old bitmap survives, beside the one the dead run added").contains(old).hasSize(2);
        awaitImageUnlocked();

        write(0xcd, 6 << 20, K64);
        JsonNode second = backup();
        assertThat(second.get("sequence").asLong()).isEqualTo(2);
        assertThat(second.get("dirtyBitmapUsed").asBoolean()).isTrue();
        assertThat(second.get("dirtyBitmapRead").asText()).isEqualTo(old);
        assertThat(second.get("sourceBytesRead").asLong()).as("both writes, before and after the kill").isEqualTo(2 * K64);
        assertRestoresIdentical(2);
        assertThat(holdfastBitmaps()).as("the dead run's bitmap is swept after the commit")
                .containsExactly(second.get("dirtyBitmapNext").asText());
    }

    @Test
    void failedRun_removesItsNewBitmap_andKeepsTheOld() throws Exception {
        String old = backup().get("dirtyBitmapNext").asText();
        write(0xab, 1 << 20, K64);
        server.storageFull = true;
        AgentRun failed = AgentRun.of(backupArgs().toArray(String[]::new));
        assertThat(failed.exit()).as("%s", failed).isNotZero();
        assertThat(holdfastBitmaps()).containsExactly(old);
        server.storageFull = false;
        JsonNode second = backup();
        assertThat(second.get("dirtyBitmapRead").asText()).isEqualTo(old);
        assertThat(second.get("sourceBytesRead").asLong()).isEqualTo(K64);
        assertRestoresIdentical(2);
    }

    /** The killed agent's qemu-nbd exits once its client socket is gone; until then the image is locked. */
    void awaitImageUnlocked() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (true) {
            try {
                QemuImg.addBitmap(image, "probe");
                QemuImg.removeBitmap(image, "probe");
                return;
            } catch (IOException e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(100);
            }
        }
    }

    static void run(String... cmd) throws Exception {
        Tool.run(List.of(cmd));
    }
}
