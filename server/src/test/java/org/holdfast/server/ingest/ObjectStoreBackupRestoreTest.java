package org.holdfast.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.holdfast.server.store.Compactor;
import org.holdfast.server.store.DataLog;
import org.holdfast.server.store.LogArchive;
import org.holdfast.server.store.LogCache;
import org.holdfast.server.store.object.S3ObjectStore;
import org.holdfast.server.store.object.S3ProxyFixture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Backend s3 end to end against a real S3Proxy: backups in compressed frames roll small data logs;
 * every sealed log is uploaded create-only and confirmed in the catalog; compaction leaves them
 * alone; with the sealed logs wiped from the local disk (catalog kept) every snapshot still restores
 * byte-identical, the logs read back by ranges from the object store.
 */
class ObjectStoreBackupRestoreTest {
    private static final int BS = 4096;

    @TempDir
    Path dir;

    @Test
    void sealedLogsUploaded_localCopiesWiped_everySnapshotRestoresFromTheObjectStore() throws Exception {
        byte[] first = FrameIngestLoopbackTest.image(1, 1024);
        byte[] second = first.clone();
        byte[] changed = FrameIngestLoopbackTest.image(2, 256);
        System.arraycopy(changed, 0, second, 300 * BS, changed.length);
        try (S3ProxyFixture s3 = S3ProxyFixture.start(dir.resolve("s3"))) {
            Supplier<LogArchive> archives = () -> new LogArchive(S3ObjectStore.open(s3.settings("hf/")), "node-a");
            try (IngestHarness h = IngestHarness.withArchive(dir.resolve("server"), 128 << 10, archives)) {
                try (AgentDriver a = h.agent()) {
                    assertThat(a.hello().protocolVersion()).isGreaterThanOrEqualTo(4); // frames from 4 on
                    assertThat(a.backupFrames("vol", first, BS, 16).newBlocks()).isEqualTo(1024);
                    assertThat(a.backupFrames("vol", second, BS, 16).newBlocks()).isEqualTo(256);
                }
                LogArchive archive = h.store().archive();
                archive.awaitUploads(60_000);
                Path data = h.store().dir();
                int durable = h.store().compactableBelow();
                List<Integer> sealed = logIds(data).stream().filter(id -> id < durable).toList();
                assertThat(sealed).as("small logs rolled during the backups").hasSizeGreaterThanOrEqualTo(4);
                assertThat(sealed).allMatch(archive::isUploaded);
                LogArchive.Stats st = archive.stats();
                assertThat(st.logsUploaded()).isEqualTo(sealed.size());
                assertThat(st.requests().puts()).as("one PUT per log and the two probe PUTs").isEqualTo(sealed.size() + 2);

                // compaction on objects: at threshold 1.0 every log with a byte not live is rewritten as a new object, the
                // old one deleted; the restores below read the rewritten objects
                Compactor.Result c = new Compactor(h.store()).run(1.0, Long.MAX_VALUE);
                assertThat(c.logsSkippedCorrupt()).isZero();
                assertThat(archive.objectsDeleted()).as("one DELETE per rewritten or dead log").isEqualTo(c.logsRewritten() + c.logsDeleted());

                h.restartWithoutLogs(sealed);
                try (AgentDriver a = h.agent()) {
                    a.hello();
                    assertThat(a.restore("vol", 1).image()).as("snapshot 1 from the object store").isEqualTo(first);
                    assertThat(a.restore("vol", 2).image()).as("snapshot 2 from the object store").isEqualTo(second);
                }
                LogArchive.Stats after = h.store().archive().stats();
                LogCache.Stats cache = h.store().archive().cache().stats();
                assertThat(cache.rangeGets()).as("the wiped logs read back by ranged GETs").isPositive();
                assertThat(after.requests().gets()).isEqualTo(cache.rangeGets());
                assertThat(after.logsFetched()).as("no whole log downloaded").isZero();
                assertThat(after.logsUploaded()).as("nothing uploaded twice").isZero();
                assertThat(logIds(data)).doesNotContainAnyElementsOf(sealed);
            }
        }
    }

    static List<Integer> logIds(Path data) throws Exception {
        try (Stream<Path> s = Files.list(data)) {
            return s.map(p -> DataLog.parseId(p.getFileName().toString())).filter(id -> id >= 0).sorted().toList();
        }
    }
}
