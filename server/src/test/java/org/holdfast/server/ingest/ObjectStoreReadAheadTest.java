package org.holdfast.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.common.protocol.Restore;
import org.holdfast.common.protocol.RestoreInfo;
import org.holdfast.server.store.DataLog;
import org.holdfast.server.store.LogArchive;
import org.holdfast.server.store.LogCache;
import org.holdfast.server.store.object.ObjectStore;
import org.holdfast.server.store.object.S3ObjectStore;
import org.holdfast.server.store.object.S3ProxyFixture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Restores on backend s3 through the local cache, against a real S3Proxy: with the local disk wiped
 * (catalog kept) a restore with read-ahead is byte-identical and its ranges come mostly from GETs made
 * ahead of it, several ranges per GET; with a cache far smaller than the data, uploaded logs and ranges
 * are evicted under running restores and every block still comes back; without read-ahead every
 * range is a miss; a read-ahead of an object that is gone ends the restore with CORRUPT_DATA naming
 * the key, instead of hanging.
 */
class ObjectStoreReadAheadTest {
    private static final int BS = 4096;
    private static final int RANGE = 16 << 10;

    @TempDir
    Path dir;

    private S3ProxyFixture s3;
    private byte[] first;
    private byte[] second;

    @BeforeEach
    void start() throws Exception {
        s3 = S3ProxyFixture.start(dir.resolve("s3"));
        first = FrameIngestLoopbackTest.image(1, 2048);
        second = first.clone();
        byte[] changed = FrameIngestLoopbackTest.image(2, 512);
        System.arraycopy(changed, 0, second, 700 * BS, changed.length);
    }

    @AfterEach
    void stop() throws Exception {
        s3.close();
    }

    private IngestHarness harness(LogCache.Settings cache) {
        return IngestHarness.withArchive(dir.resolve("server"), 128 << 10,
                () -> new LogArchive(S3ObjectStore.open(s3.settings("hf/")), "node-a", cache));
    }

    /** Two snapshots in compressed frames, uploaded; then the server stops and its sealed logs are wiped. */
    private List<Integer> backupAndWipe(IngestHarness h) throws Exception {
        try (AgentDriver a = h.agent()) {
            a.hello();
            a.backupFrames("vol", first, BS, 16);
            a.backupFrames("vol", second, BS, 16);
        }
        h.store().archive().awaitUploads(60_000);
        Path data = h.store().dir();
        int durable = h.store().compactableBelow();
        List<Integer> sealed;
        try (Stream<Path> s = Files.list(data)) {
            sealed = s.map(p -> DataLog.parseId(p.getFileName().toString())).filter(id -> id >= 0 && id < durable).toList();
        }
        assertThat(sealed).as("small logs rolled").hasSizeGreaterThanOrEqualTo(8);
        h.stop();
        for (int id : sealed) {
            Files.delete(data.resolve(DataLog.fileName(id)));
        }
        return sealed;
    }

    private void restoreBoth(IngestHarness h) {
        try (AgentDriver a = h.agent()) {
            a.hello();
            assertThat(a.restore("vol", 1).image()).as("snapshot 1").isEqualTo(first);
            assertThat(a.restore("vol", 2).image()).as("snapshot 2").isEqualTo(second);
        }
    }

    /** Backs up, wipes the sealed logs, restores both snapshots byte-identical with a cold cache set by {@code cache}. */
    private LogCache.Stats coldRestore(LogCache.Settings cache) throws Exception {
        try (IngestHarness h = harness(cache)) {
            backupAndWipe(h);
            h.start();
            restoreBoth(h);
            assertThat(h.store().archive().stats().requests().gets()).as("every GET was a range's")
                    .isEqualTo(h.store().archive().cache().stats().rangeGets());
            return h.store().archive().cache().stats();
        }
    }

    @Test
    void restore_wipedDiskReadAhead_byteIdenticalRangesFetchedAheadSeveralPerGet() throws Exception {
        LogCache.Stats st = coldRestore(new LogCache.Settings(64L << 20, RANGE, true, 4, 128 * RANGE));
        long ranges = st.bytesFetched() / RANGE;
        assertThat(st.rangeGets()).as("ranges fetched").isPositive();
        assertThat(st.misses()).as("few reads had to fetch for themselves: %s", st).isLessThan(st.rangeGets() / 2);
        assertThat(st.rangeGets()).as("consecutive ranges coalesced into one GET: %s", st).isLessThan(ranges);
        assertThat(st.hits() + st.readAheadWaits()).as("reads served by read-ahead: %s", st).isGreaterThan(st.misses());
    }

    @Test
    void restore_readAheadOff_byteIdenticalEveryRangeAMiss() throws Exception {
        LogCache.Stats st = coldRestore(new LogCache.Settings(64L << 20, RANGE, false, 4, 16 * RANGE));
        assertThat(st.misses()).as("no read-ahead: %s", st).isPositive().isEqualTo(st.rangeGets());
        assertThat(st.readAheadWaits()).isZero();
    }

    @Test
    void restore_cacheFarSmallerThanTheData_evictionUnderRestoresLosesNoBlock() throws Exception {
        long limit = 8 * RANGE; // 128 KiB against several MiB of logs
        try (IngestHarness h = harness(new LogCache.Settings(limit, RANGE, true, 3, 4 * RANGE))) {
            try (AgentDriver a = h.agent()) {
                a.hello();
                a.backupFrames("vol", first, BS, 16);
                a.backupFrames("vol", second, BS, 16);
            }
            h.store().archive().awaitUploads(60_000);
            h.store().archive().cache().awaitEvictions(10_000);
            restoreBoth(h);
            LogCache cache = h.store().archive().cache();
            cache.awaitEvictions(10_000);
            LogCache.Stats st = cache.stats();
            assertThat(st.evictions()).as("uploaded logs and ranges evicted: %s", st).isGreaterThan(50);
            assertThat(st.cachedBytes()).isLessThanOrEqualTo(limit);
            h.restart(); // and after a restart, counted from disk
            restoreBoth(h);
            assertThat(h.store().archive().cache().stats().cachedBytes()).isLessThanOrEqualTo(limit);
        }
    }

    @Test
    void restore_objectGoneUnderReadAhead_corruptDataNamingTheKeyNotAHang() throws Exception {
        try (IngestHarness h = harness(new LogCache.Settings(64L << 20, RANGE, true, 4, 16 * RANGE))) {
            List<Integer> sealed = backupAndWipe(h);
            String key;
            try (ObjectStore raw = S3ObjectStore.open(s3.settings("hf/"))) {
                key = raw.list(String.format("node-a/logs/%08x-", sealed.get(3))).get(0);
                raw.delete(key);
            }
            h.start();
            try (AgentDriver a = h.agent()) {
                a.hello();
                a.send(new Restore("vol", 1, 0));
                a.expect(RestoreInfo.class);
                Object o;
                do {
                    o = a.next(); // each within 30 s, or the test fails: a hang would
                } while (!(o instanceof ErrorMessage));
                ErrorMessage e = (ErrorMessage) o;
                assertThat(e.code()).isEqualTo(ErrorCode.CORRUPT_DATA);
                assertThat(e.message()).contains(key).contains("gone");
            }
            assertThat(h.store().badBlocks().isEmpty()).as("the lost block is marked bad, to be repaired by a backup").isFalse();
        }
    }
}
