package org.holdfast.server.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.holdfast.common.kill.KillPoints;
import org.holdfast.server.store.object.ObjectStore;
import org.holdfast.server.store.object.S3ObjectStore;
import org.holdfast.server.store.object.S3ProxyFixture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Compaction and deletion of archived logs against S3Proxy: a rewritten log becomes a new object
 * (new epoch) and its old object goes only after the switch is durable; a dead log loses its file,
 * its object, then its upload record. After each run, and after a crash at every step of it, the
 * bucket holds exactly the objects the catalog names, no delete intent is left once the store has
 * reopened, and every live block reads back from the object store alone (local sealed logs wiped).
 */
class ObjectCompactionTest {
    private static final int BS = 4096;
    private static final String NODE = "n1";

    @TempDir
    Path dir;

    private S3ProxyFixture s3;

    @BeforeEach
    void start() throws Exception {
        s3 = S3ProxyFixture.start(dir.resolve("s3"));
    }

    @AfterEach
    void stop() throws Exception {
        KillPoints.disarm();
        s3.close();
    }

    /** One open store with its archive and catalog, closed in the server's order. */
    private final class Stack implements AutoCloseable {
        final MetadataDb db = MetadataDb.open(dir.resolve("catalog"));
        final LogArchive archive = new LogArchive(S3ObjectStore.open(s3.settings("t/")), NODE);
        final DataStore store = DataStore.open(new DataStore.Settings(dir.resolve("data"), 1L << 16, FsyncPolicy.COMMIT, 64, 0),
                db, archive);

        @Override
        public void close() {
            store.close();
            archive.close();
            db.close();
        }
    }

    /**
     * Writes 200 random blocks into 64 KiB logs (15 a log) and frees all but every 4th, except that
     * blocks 60..89 all go (two dead logs) and 150.. all stay; waits for the uploads. Returns the live payloads.
     */
    private Map<Long, byte[]> fill() {
        Map<Long, byte[]> live = new HashMap<>();
        Random r = new Random(7);
        try (Stack s = new Stack()) {
            long[] pbns = new long[200];
            boolean[] keep = new boolean[pbns.length];
            for (int i = 0; i < pbns.length; i++) {
                byte[] payload = new byte[BS];
                r.nextBytes(payload);
                byte[] fp = new byte[32];
                r.nextBytes(fp);
                pbns[i] = s.store.append(fp, 0, payload, 0, BS, FormatVersions.CODEC_RAW, BS);
                keep[i] = i >= 150 || (i % 4 == 0 && (i < 60 || i >= 90));
                if (keep[i]) {
                    live.put(pbns[i], payload);
                }
            }
            s.store.sync();
            try (MetadataBatch b = new MetadataBatch()) {
                for (int i = 0; i < pbns.length; i++) {
                    if (!keep[i]) {
                        s.store.locations().delete(b, pbns[i]);
                    }
                }
                s.db.write(b, true);
            }
            s.archive.awaitUploads(60_000);
            assertThat(s.archive.uploadedIds()).hasSizeGreaterThan(10);
        }
        return live;
    }

    private Set<String> objects() {
        try (ObjectStore raw = S3ObjectStore.open(s3.settings("t/"))) {
            return new TreeSet<>(raw.list(NODE + "/logs/"));
        }
    }

    private static Set<String> intents(MetadataDb db) {
        Set<String> keys = new TreeSet<>();
        try (CheckedIterator it = db.iterator(MetadataDb.Column.META)) {
            for (it.seek(MetadataDb.bytes(DeleteIntents.META_RETIRE)); it.isValid(); it.next()) {
                String k = new String(it.key(), java.nio.charset.StandardCharsets.UTF_8);
                if (!k.startsWith(DeleteIntents.META_RETIRE)) {
                    break;
                }
                keys.add(k);
            }
        }
        return keys;
    }

    /** The bucket holds exactly the objects the upload records name, and no delete intent is left. */
    private void assertBucketMatchesCatalog(Stack s, String context) {
        s.archive.awaitUploads(60_000); // the start's resumed deletions run on the uploader thread
        Set<String> named = s.archive.uploadedIds().stream().map(s.archive::objectKeyOf).collect(Collectors.toCollection(TreeSet::new));
        assertThat(objects()).as(context + ": objects in the bucket vs the upload records").isEqualTo(named);
        assertThat(intents(s.db)).as(context + ": delete intents left").isEmpty();
    }

    /** Deletes every local sealed log whose upload is confirmed (a wiped cache); returns how many. */
    private int wipeUploaded() throws Exception {
        Set<Integer> uploaded;
        try (Stack s = new Stack()) {
            s.archive.awaitUploads(60_000);
            uploaded = s.archive.uploadedIds();
        }
        int n = 0;
        for (int id : uploaded) {
            if (Files.deleteIfExists(dir.resolve("data").resolve(DataLog.fileName(id)))) {
                n++;
            }
        }
        return n;
    }

    /** With the local sealed logs wiped, every live block reads back byte-identical (fetched from the store). */
    private void assertReadableFromTheStore(Map<Long, byte[]> live, String context) throws Exception {
        assertThat(wipeUploaded()).as(context + ": sealed logs wiped").isPositive();
        try (Stack s = new Stack()) {
            StoredBlock b = new StoredBlock();
            for (Map.Entry<Long, byte[]> e : live.entrySet()) {
                s.store.read(e.getKey(), b);
                assertThat(Arrays.copyOfRange(b.data(), b.dataOffset(), b.dataOffset() + b.storedLength()))
                        .as(context + ": pbn %d", e.getKey()).isEqualTo(e.getValue());
            }
            assertThat(s.archive.cache().stats().rangeGets()).as(context + ": ranges fetched from the store").isPositive();
        }
    }

    private static long sealedBytes(Stack s) {
        return s.archive.uploadedIds().stream().mapToLong(s.archive::uploadedSize).sum();
    }

    @Test
    void compact_archivedLogs_rewrittenAsNewObjectsDeadOnesDeleted_everyLiveBlockReadsFromTheStore() throws Exception {
        Map<Long, byte[]> live = fill();
        Set<String> before = objects();
        Compactor.Result r;
        long bytesBefore;
        try (Stack s = new Stack()) {
            bytesBefore = sealedBytes(s);
            r = new Compactor(s.store).run(Compactor.DEFAULT_THRESHOLD, Long.MAX_VALUE);
            assertThat(r.logsRewritten()).as("sparse logs rewritten").isGreaterThan(1);
            assertThat(r.logsDeleted()).as("dead logs deleted").isGreaterThanOrEqualTo(2);
            assertBucketMatchesCatalog(s, "after compaction");
            assertThat(sealedBytes(s)).as("bytes in the bucket").isLessThan(bytesBefore * 2 / 3);
            assertThat(s.archive.objectsDeleted()).isEqualTo(r.logsRewritten() + r.logsDeleted());
        }
        Set<String> after = objects();
        Set<String> kept = new TreeSet<>(before);
        kept.retainAll(after);
        assertThat(kept).as("untouched logs keep their objects").hasSize(before.size() - r.logsRewritten() - r.logsDeleted());
        assertThat(after).hasSize(before.size() - r.logsDeleted());
        assertReadableFromTheStore(live, "after compaction");
        try (Stack s = new Stack()) {
            s.archive.awaitUploads(60_000);
            assertThat(s.archive.stats().logsUploaded()).as("a deleted log is never uploaded again").isZero();
        }
    }

    @Test
    void compact_evictedLogs_copiedFromTheirObjectsAndStillReadable() throws Exception {
        Map<Long, byte[]> live = fill();
        assertThat(wipeUploaded()).isPositive();
        try (Stack s = new Stack()) {
            Compactor.Result r = new Compactor(s.store).run(Compactor.DEFAULT_THRESHOLD, Long.MAX_VALUE);
            assertThat(r.logsRewritten()).isGreaterThan(1);
            assertThat(r.logsDeleted()).isGreaterThanOrEqualTo(2);
            assertThat(s.archive.stats().logsFetched()).as("each rewritten log's source downloaded").isEqualTo(r.logsRewritten());
            assertBucketMatchesCatalog(s, "after compacting evicted logs");
        }
        try (Stream<Path> files = Files.list(dir.resolve("data"))) {
            assertThat(files.map(p -> p.getFileName().toString())).noneMatch(n -> n.endsWith(".compact") || n.endsWith(".download"));
        }
        assertReadableFromTheStore(live, "after compacting evicted logs");
    }

    /**
     * A compacted log keeps its id but becomes a new object: ranges of the old object cached before
     * the compaction must never be served for it (they would read as corrupt, or as other blocks).
     */
    @Test
    void compact_afterRangesOfTheOldObjectsWereCached_readsServeTheNewObjects() throws Exception {
        Map<Long, byte[]> live = fill();
        assertThat(wipeUploaded()).isPositive();
        try (Stack s = new Stack()) {
            StoredBlock b = new StoredBlock();
            for (long pbn : live.keySet()) {
                s.store.read(pbn, b); // caches ranges of the old objects
            }
            s.archive.cache().awaitEvictions(10_000);
            assertThat(s.archive.cache().stats().rangeGets()).as("ranges of the old objects cached").isPositive();
            Compactor.Result r = new Compactor(s.store).run(Compactor.DEFAULT_THRESHOLD, Long.MAX_VALUE);
            assertThat(r.logsRewritten()).isGreaterThan(1);
        }
        // wipes the local copies, the compacted ones too: reads go to the new objects through the cache
        assertReadableFromTheStore(live, "after compacting logs whose old ranges were cached");
    }

    /** A crash at each step of compaction and deletion (the {@code count}-th hit of the point): nothing lost, nothing leaked. */
    @ParameterizedTest(name = "{0} hit {1}")
    @CsvSource({
        "compaction.afterCopy, 1",
        "object.compaction.afterUpload, 1",
        "object.compaction.afterUpload, 2",
        "compaction.afterSwitch, 1",
        "object.retire.beforeDelete, 1",
        "object.retire.afterDelete, 1",
        "object.retire.beforeDelete, 3",
        "object.retire.afterDelete, 4",
    })
    void crash_atEachStep_nextStartFinishesOrRollsBack_bucketMatchesCatalog_nothingLost(String point, int count) throws Exception {
        Map<Long, byte[]> live = fill();
        try (Stack s = new Stack()) {
            KillPoints.armFromSpec(point + "," + count, KillPoints.Mode.THROW);
            assertThatThrownBy(() -> new Compactor(s.store).run(Compactor.DEFAULT_THRESHOLD, Long.MAX_VALUE))
                    .isInstanceOf(KillPoints.Killed.class);
            KillPoints.disarm();
        }
        try (Stack s = new Stack()) {
            assertBucketMatchesCatalog(s, "after the restart");
        }
        assertReadableFromTheStore(live, "after the restart");
        try (Stack s = new Stack()) {
            Compactor.Result r = new Compactor(s.store).run(Compactor.DEFAULT_THRESHOLD, Long.MAX_VALUE);
            assertThat(r.logsSkippedCorrupt()).isZero();
            assertBucketMatchesCatalog(s, "after the next compaction");
        }
        assertReadableFromTheStore(live, "after the next compaction");
    }

    /** The start's background deletions may run while a compaction has uploaded its copy but not switched yet. */
    @Test
    void deletionsRunBeforeTheSwitch_compactedCopyKept_bucketMatchesCatalog() throws Exception {
        Map<Long, byte[]> live = fill();
        try (Stack s = new Stack()) {
            Compactor c = new Compactor(s.store);
            int[] runs = new int[1];
            c.beforeSwitch = id -> {
                s.archive.retirePending();
                runs[0]++;
            };
            Compactor.Result r = c.run(Compactor.DEFAULT_THRESHOLD, Long.MAX_VALUE);
            assertThat(runs[0]).isEqualTo(r.logsRewritten()).isPositive();
            assertBucketMatchesCatalog(s, "after compaction");
        }
        assertReadableFromTheStore(live, "after compaction");
    }

    /** A checker (read-only open, as the offline fsck) with deletions pending after a crash deletes no object; the next normal start does. */
    @Test
    void readOnlyOpen_withPendingDeletions_deletesNoObject() throws Exception {
        fill();
        try (Stack s = new Stack()) {
            KillPoints.armFromSpec("object.retire.beforeDelete,1", KillPoints.Mode.THROW);
            assertThatThrownBy(() -> new Compactor(s.store).run(Compactor.DEFAULT_THRESHOLD, Long.MAX_VALUE))
                    .isInstanceOf(KillPoints.Killed.class);
            KillPoints.disarm();
        }
        Set<String> before = objects();
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"));
                LogArchive archive = new LogArchive(S3ObjectStore.open(s3.settings("t/")), NODE);
                DataStore store = DataStore.openReadOnly(dir.resolve("data"), db, archive)) {
            archive.awaitUploads(30_000); // the deletions a start resumes run on the uploader thread
        }
        assertThat(objects()).as("a read-only open deletes no object").isEqualTo(before);
        try (Stack s = new Stack()) {
            s.archive.awaitUploads(30_000);
            assertBucketMatchesCatalog(s, "after a normal start");
        }
        assertThat(objects()).as("the normal start finished the pending deletion").isNotEqualTo(before);
    }

    @Test
    void offlineCompact_archivedStoreWithoutItsObjectStore_touchesNothing() throws Exception {
        fill();
        Set<String> before = objects();
        long files;
        try (Stream<Path> s = Files.list(dir.resolve("data"))) {
            files = s.count();
        }
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            Compactor.Result r = Compactor.compact(dir.resolve("data"), db, Compactor.DEFAULT_THRESHOLD);
            assertThat(r.logsRewritten() + r.logsDeleted()).isZero();
        }
        try (Stream<Path> s = Files.list(dir.resolve("data"))) {
            assertThat(s.count()).isEqualTo(files);
        }
        assertThat(objects()).isEqualTo(before);
    }
}
