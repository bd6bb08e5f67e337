package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.holdfast.common.protocol.PayloadCodec;
import org.holdfast.server.cluster.LoadProbe;
import org.holdfast.server.cluster.MemberState;
import org.holdfast.server.cluster.MembershipSettings;
import org.holdfast.server.cluster.NodeGeneration;
import org.holdfast.server.security.AuditLog;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FsyncPolicy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A worker's range-data directory copied after it registered (a cloned VM, a disk restored from an
 * image), with real workers, range stores and catalog over real sockets: the original registers again
 * and stores more; the copy, started as the same node, is refused by its node generation, and nothing
 * in either directory changes, nor at the master.
 */
class ClonedRangeDataTest {
    private static final long FIRST = MembershipSettings.DEFAULT_FIRST_PBN;

    @TempDir
    Path dir;
    private TestMaster master;
    private Path tokenFile;

    @BeforeEach
    void start() throws IOException {
        master = new TestMaster(dir.resolve("catalog"), new MembershipSettings(Duration.ofMillis(100), Duration.ofSeconds(2),
                Duration.ofSeconds(3), FIRST, MembershipSettings.DEFAULT_RANGE_SIZE), AuditLog.NONE);
        tokenFile = dir.resolve("worker.token");
        Files.writeString(tokenFile, master.workerToken());
    }

    @AfterEach
    void stop() {
        master.close();
    }

    /** A node "w1" serving range data from {@code rangeData}. */
    private final class Node implements AutoCloseable {
        final WorkerRangeData data;
        final WorkerConnector link;

        Node(Path rangeData) {
            data = new WorkerRangeData(rangeData, new DataStore.Settings(dir.resolve("unused"), 1 << 20, FsyncPolicy.COMMIT, 64, 0));
            link = new WorkerConnector(master.linkSettings("w1", tokenFile), new LoadProbe(dir), null, data);
            link.start();
        }

        @Override
        public void close() {
            link.close();
            data.close();
        }
    }

    /** Starts a node on {@code rangeData}, waits until it serves and the master acknowledged generation {@code g}, stores a block. */
    private long serveAndStore(Path rangeData, long g, byte fill) throws Exception {
        try (Node n = new Node(rangeData)) {
            await().atMost(Duration.ofSeconds(20)).until(() -> n.link.status().connected() && master.server.rangeStores().up(1) != null
                    && master.registry.nodeGeneration(1).acknowledged() == g);
            byte[] block = new byte[4096];
            java.util.Arrays.fill(block, fill);
            byte[] fp = MessageDigest.getInstance("SHA-256").digest(block);
            return master.server.rangeStores().up(1).store(PayloadCodec.RAW, 4096, 1, fp, block).get(10, java.util.concurrent.TimeUnit.SECONDS);
        } finally {
            await().atMost(Duration.ofSeconds(10)).until(() -> master.registry.state(1) == MemberState.LOST);
        }
    }

    @Test
    void copyOfTheRangeData_afterTheOriginalRegisteredAgain_isRefused_andNothingInEitherRangeChanges() throws Exception {
        Path original = dir.resolve("a").resolve(WorkerRangeData.DIRECTORY);
        Path copy = dir.resolve("b").resolve(WorkerRangeData.DIRECTORY);
        assertThat(serveAndStore(original, 1, (byte) 1)).isEqualTo(FIRST);
        copyTree(original, copy); // the disk is cloned while the worker is down
        assertThat(serveAndStore(original, 2, (byte) 2)).as("the original goes on past its first block").isEqualTo(FIRST + 1);

        Map<String, String> originalBefore = digest(original);
        Map<String, String> copyBefore = digest(copy);
        try (Node clone = new Node(copy)) {
            await().atMost(Duration.ofSeconds(20)).until(() -> clone.link.status().lastError() != null
                    && clone.link.status().lastError().contains("older copy"));
            assertThat(clone.link.status().lastError()).contains("range data of worker 1 on node w1 is an older copy (a cloned or"
                    + " restored disk?): generation 1, the worker is at 2");
            assertThat(clone.link.status().connected()).isFalse();
            assertThat(master.server.rangeStores().up(1)).as("no data call reaches it").isNull();
        }
        assertThat(digest(copy)).as("the copy: nothing written").isEqualTo(copyBefore);
        assertThat(digest(original)).as("the original: untouched").isEqualTo(originalBefore);
        assertThat(master.registry.nodeGeneration(1)).isEqualTo(new NodeGeneration(2, 2));
        assertThat(serveAndStore(original, 3, (byte) 3)).as("the original serves on, its PBNs its own").isEqualTo(FIRST + 2);
    }

    private static void copyTree(Path from, Path to) throws IOException {
        Files.createDirectories(to.getParent());
        try (Stream<Path> all = Files.walk(from)) {
            for (Path p : (Iterable<Path>) all::iterator) {
                Files.copy(p, to.resolve(from.relativize(p).toString()));
            }
        }
    }

    /** Every file under {@code root} and the SHA-256 of its content. */
    private static Map<String, String> digest(Path root) throws IOException {
        Map<String, String> out = new TreeMap<>();
        try (Stream<Path> all = Files.walk(root)) {
            all.filter(Files::isRegularFile).forEach(p -> {
                try {
                    out.put(root.relativize(p).toString(), HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256")
                            .digest(Files.readAllBytes(p))));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                } catch (java.security.NoSuchAlgorithmException e) {
                    throw new IllegalStateException(e);
                }
            });
        }
        return out;
    }
}
