package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.holdfast.common.kill.KillPoints;
import org.holdfast.common.protocol.Commit;
import org.holdfast.server.api.TestTokens;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.MapCursor;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.ingest.AgentDriver;
import org.holdfast.server.ingest.cluster.ClusterServer;
import org.holdfast.server.ingest.cluster.DataOnWorkersCluster;
import org.holdfast.server.ingest.cluster.WorkerConnector;
import org.holdfast.server.ingest.cluster.RemoteRangeStore;
import org.holdfast.server.security.Role;
import org.holdfast.server.store.DataStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Verify and the image API on a master with {@code holdfast.cluster.data=workers}, end to end in this
 * JVM: a master and two workers as Spring contexts over their real ports, an agent backing up over
 * the ingest port. A clean cluster verifies clean and its images equal the restores; a byte flipped in
 * a block of a worker's range log (the real file) is found, named with its snapshot and marked bad on
 * the master; a backup whose worker dies between the repair's append and its sync fails and changes
 * nothing; the volume's next backup repairs the block in place on its worker (the old snapshot restores
 * byte-identical, the mark is gone, verify is clean); with one worker stopped its blocks are
 * reported unreadable now, naming the worker, and nothing more is marked bad.
 */
class DataOnWorkersVerifyTest {
    private static final int BS = 4096;
    private static final int BLOCKS = 48;
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path data;

    private static byte[] random(long seed) {
        byte[] b = new byte[BLOCKS * BS];
        new Random(seed).nextBytes(b);
        return b;
    }

    @Test
    void verify_dataOnWorkers_cleanThenNamesAFlippedBlock_andAStoppedWorkersBlocksAreUnreadableNotBad() throws Exception {
        try (DataOnWorkersCluster nodes = new DataOnWorkersCluster(data, DataOnWorkersCluster.VERIFY, "vw-1", "vw-2").start()) {
            ConfigurableApplicationContext master = nodes.master();
            List<ConfigurableApplicationContext> workers = nodes.workers();
            ClusterServer cluster = master.getBean(ClusterServer.class);

            // a volume's blocks go to the worker its segment's lookup names: four volumes so that both workers hold some
            List<String> volumes = List.of("va", "vb", "vc", "vd");
            List<byte[]> images = new ArrayList<>();
            try (AgentDriver agent = nodes.agent()) {
                for (int i = 0; i < volumes.size(); i++) {
                    images.add(random(i + 1));
                    agent.backup(volumes.get(i), images.get(i), BS, false); // raw payloads: each block's bytes lie in its worker's log as they are
                }
                assertThat(agent.restore("va", 1).image()).isEqualTo(images.get(0));
            }
            byte[] a = images.get(0);
            byte[] b = images.get(1);
            assertThat(master.getBean(DataStore.class).stats().appendedBlocks()).as("no block in the master's own store").isZero();
            long[] pbnsA = pbns(master, "va");
            List<long[]> all = volumes.stream().map(v -> pbns(master, v)).toList();
            assertThat(all.stream().flatMapToLong(Arrays::stream).mapToObj(p -> cluster.rangeStores().owner(p).name()).distinct().count())
                    .as("the blocks are on both workers").isEqualTo(2);

            // clean: every block read from its worker, decoded and hashed
            JsonNode clean = verify(master, "{\"full\": true}");
            assertThat(clean.get("badBlocks").asLong()).as(clean.toString()).isZero();
            assertThat(clean.get("unreadableNow").asLong()).as(clean.toString()).isZero();
            assertThat(clean.get("blocksRead").asLong()).as(clean.toString()).isEqualTo((long) volumes.size() * BLOCKS);

            // the image API serves the bytes a restore gives, whole and in a range
            HttpResponse<byte[]> image = get(master, "/api/v1/volumes/va/snapshots/1/image", null);
            assertThat(image.statusCode()).isEqualTo(200);
            assertThat(image.body()).isEqualTo(a);
            HttpResponse<byte[]> part = get(master, "/api/v1/volumes/vb/snapshots/1/image", "bytes=5000-20000");
            assertThat(part.statusCode()).isEqualTo(206);
            assertThat(part.body()).isEqualTo(Arrays.copyOfRange(b, 5000, 20001));

            // a byte flipped in the log record of va's LBN 7 on its worker: verify names the block and va@1, and marks it bad
            long rotten = pbnsA[7];
            RemoteRangeStore holder = cluster.rangeStores().owner(rotten);
            ConfigurableApplicationContext holderCtx = workers.get(holder.name().equals("vw-1") ? 0 : 1);
            flip(data.resolve(holder.name()), Arrays.copyOfRange(a, 7 * BS, 8 * BS));
            JsonNode damaged = verify(master, "{\"full\": true}");
            assertThat(damaged.get("badBlocks").asLong()).as(damaged.toString()).isEqualTo(1);
            assertThat(damaged.get("damagedSnapshots").toString()).contains("va@1").doesNotContain("vb").doesNotContain("vc")
                    .doesNotContain("vd");
            JsonNode status = json(get(master, "/api/v1/verify", null));
            assertThat(status.get("badBlockCount").asInt()).isEqualTo(1);
            assertThat(status.get("badBlocks").get(0).get("pbn").asLong()).isEqualTo(rotten);
            assertThat(status.get("badBlocks").get(0).get("file").asText()).contains(holder.name());
            assertThat(status.toString()).contains("va");
            HttpResponse<byte[]> broken = get(master, "/api/v1/volumes/va/snapshots/1/image", "bytes=" + 7 * BS + "-" + (8 * BS - 1));
            assertThat(broken.statusCode()).as("the damaged block is never sent").isEqualTo(500);

            // the worker dies (in effect) between the repair's append and its sync: the backup fails, nothing changes
            KillPoints.arm(KillPoints.REPAIR_BEFORE_SWITCH, 1, KillPoints.Mode.THROW);
            try (AgentDriver agent = nodes.agent()) {
                agent.begin("va", BS, a.length, 0);
                agent.sendEntriesAndBlocks(a, BS, 0, BLOCKS, false, null);
                agent.send(new Commit(a.length));
                assertThat(agent.expectErrorAndStop().message()).as("the worker's sync failed").contains("DATA_SYNC");
            } finally {
                KillPoints.disarm();
            }
            assertThat(json(get(master, "/api/v1/verify", null)).get("badBlockCount").asInt()).as("the mark stays").isEqualTo(1);
            assertThat(get(master, "/api/v1/volumes/va/snapshots/1/image", "bytes=" + 7 * BS + "-" + (8 * BS - 1)).statusCode())
                    .as("the damaged copy is still never sent").isEqualTo(500);

            // the flagged volume's next backup repairs the block in place on its worker: the old snapshot heals
            try (AgentDriver agent = nodes.agent()) {
                assertThat(agent.backup("va", a, BS, false).sequence()).isEqualTo(2);
                assertThat(agent.restore("va", 2).image()).isEqualTo(a);
                assertThat(agent.restore("va", 1).image()).as("the old snapshot, byte-identical").isEqualTo(a);
            }
            long[] pbnsA2 = pbns(master, "va", 2);
            assertThat(pbnsA2[7]).as("the same, repaired PBN").isEqualTo(rotten);
            assertThat(json(get(master, "/api/v1/verify", null)).get("badBlockCount").asInt()).as("the master's mark cleared").isZero();
            assertThat(get(master, "/api/v1/volumes/va/snapshots/1/image", null).body()).isEqualTo(a);
            JsonNode healed = verify(master, "{\"full\": true}");
            assertThat(healed.get("badBlocks").asLong()).as(healed.toString()).isZero();
            assertThat(healed.get("damagedSnapshots").size()).as(healed.toString()).isZero();

            // the other worker stopped: its blocks are unreadable now, named, and nothing more is marked bad
            int stopped = holderCtx == workers.get(0) ? 1 : 0;
            ConfigurableApplicationContext down = workers.get(stopped);
            long downId = down.getBean(WorkerConnector.class).status().assignment().workerId();
            String downName = stopped == 0 ? "vw-1" : "vw-2";
            down.close();
            await().atMost(Duration.ofSeconds(30)).until(() -> cluster.rangeStores().up(downId) == null);
            long onDown = Stream.concat(all.stream(), Stream.of(pbnsA2)).flatMapToLong(Arrays::stream)
                    .filter(p -> !holder.range().contains(p)).distinct().count();
            List<String> touched = new ArrayList<>();
            for (int i = 0; i < volumes.size(); i++) {
                if (Arrays.stream(all.get(i)).anyMatch(p -> !holder.range().contains(p))) {
                    touched.add(volumes.get(i) + "@1");
                }
            }
            if (Arrays.stream(pbnsA2).anyMatch(p -> !holder.range().contains(p))) {
                touched.add("va@2");
            }
            JsonNode partial = verify(master, "{\"full\": true}");
            assertThat(partial.get("unreadableNow").asLong()).as(partial.toString()).isEqualTo(onDown);
            assertThat(partial.get("unreadable").toString()).contains(downName).contains("not marked bad");
            assertThat(partial.get("uncheckedSnapshots").size()).as(partial.toString()).isEqualTo(touched.size());
            assertThat(partial.get("uncheckedSnapshots").toString()).contains(touched);
            assertThat(partial.get("badBlocks").asLong()).as("nothing marked bad").isZero();
            assertThat(json(get(master, "/api/v1/verify", null)).get("badBlockCount").asInt()).isZero();
            String onDownVolume = touched.get(0).substring(0, 2);
            long[] pbnsDown = all.get(volumes.indexOf(onDownVolume));
            int lbn = 0;
            while (holder.range().contains(pbnsDown[lbn])) {
                lbn++;
            }
            HttpResponse<byte[]> unavailable = get(master, "/api/v1/volumes/" + onDownVolume + "/snapshots/1/image",
                    "bytes=" + lbn * BS + "-" + (lbn * BS + 99));
            assertThat(unavailable.statusCode()).as("a block on the stopped worker: nothing sent").isEqualTo(503);
        }
    }

    /** The PBNs of {@code volume}'s snapshot 1, in LBN order. */
    private static long[] pbns(ConfigurableApplicationContext master, String volume) {
        return pbns(master, volume, 1);
    }

    /** The PBNs of {@code volume}'s snapshot {@code sequence}, in LBN order. */
    private static long[] pbns(ConfigurableApplicationContext master, String volume, long sequence) {
        Catalog catalog = master.getBean(Catalog.class);
        VolumeRecord v = catalog.requireVolume(new org.holdfast.common.id.VolumeId(volume));
        long[] out = new long[BLOCKS];
        try (MapCursor c = catalog.mapCursor(v.internalId())) {
            c.startScan(sequence, 0, BLOCKS);
            while (c.nextMapped()) {
                out[(int) c.lbn()] = c.pbn();
            }
        }
        return out;
    }

    /** Flips one byte in the middle of {@code block}'s bytes in the one file under {@code dir} that holds them. */
    static void flip(Path dir, byte[] block) throws IOException {
        List<Path> files;
        try (Stream<Path> s = Files.walk(dir)) {
            files = s.filter(Files::isRegularFile).toList();
        }
        for (Path f : files) {
            byte[] content = Files.readAllBytes(f);
            for (int i = 0; i + block.length <= content.length; i++) {
                if (content[i] == block[0] && Arrays.equals(content, i, i + block.length, block, 0, block.length)) {
                    try (FileChannel ch = FileChannel.open(f, StandardOpenOption.WRITE)) {
                        ch.write(ByteBuffer.wrap(new byte[] {(byte) ~content[i + 100]}), i + 100);
                        ch.force(true);
                    }
                    return;
                }
            }
        }
        throw new AssertionError("no file under " + dir + " holds the block's bytes");
    }

    /** Runs a verify pass (POST /api/v1/verify), waits for its job and answers its result. */
    static JsonNode verify(ConfigurableApplicationContext ctx, String body) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(request(ctx, "/api/v1/verify", null)
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(202);
        String job = r.headers().firstValue("Location").orElseThrow();
        long deadline = System.currentTimeMillis() + 120_000;
        while (true) {
            JsonNode j = json(get(ctx, URI.create(job).getPath(), null));
            String state = j.get("state").asText();
            if (state.equals("succeeded")) {
                return j.get("result");
            }
            assertThat(state).as(j.toString()).isIn("queued", "running");
            assertThat(System.currentTimeMillis()).as("verify job still running: " + j).isLessThan(deadline);
            Thread.sleep(50);
        }
    }

    static HttpResponse<byte[]> get(ConfigurableApplicationContext ctx, String path, String range) throws Exception {
        HttpRequest.Builder b = request(ctx, path, range).GET();
        return HttpClient.newHttpClient().send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private static HttpRequest.Builder request(ConfigurableApplicationContext ctx, String path, String range) {
        String port = ctx.getEnvironment().getProperty("local.server.port");
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .header("Authorization", "Bearer " + TestTokens.issue(ctx, Role.ADMIN)).header("Accept", "*/*");
        return range == null ? b : b.header("Range", range);
    }

    static JsonNode json(HttpResponse<byte[]> r) throws IOException {
        assertThat(r.statusCode()).as(new String(r.body())).isEqualTo(200);
        return JSON.readTree(r.body());
    }
}
