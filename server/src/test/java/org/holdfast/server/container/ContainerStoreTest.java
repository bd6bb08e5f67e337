package org.holdfast.server.container;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ContainerStoreTest {
    @TempDir
    Path dir;

    /** Stale marks held in a set, for the test. */
    static final class SetStale implements StalePbns {
        final Set<Long> pbns = new HashSet<>();
        long seq;

        void mark(long pbn) {
            pbns.add(pbn);
            seq++;
        }

        @Override
        public long lastSeq() {
            return seq;
        }

        @Override
        public boolean contains(long pbn) {
            return pbns.contains(pbn);
        }
    }

    private static byte[] fps(long seed, int n) {
        byte[] b = new byte[n * 32];
        new Random(seed).nextBytes(b);
        return b;
    }

    private static long[] pbns(long first, int n) {
        long[] p = new long[n];
        for (int i = 0; i < n; i++) {
            p[i] = first + i;
        }
        return p;
    }

    @Test
    void acquire_afterFlushAndReopen_loadsFromDiskAndPurgesStaleOnLoad() {
        SetStale stale = new SetStale();
        byte[] f = fps(1, 300);
        int id;
        try (ContainerStore store = new ContainerStore(dir, 4096, 2, 1 << 20, stale)) {
            Container c = store.create();
            c.lock().writeLock().lock();
            c.appendSegment(f, 0, 300, pbns(1000, 300), 1);
            c.lock().writeLock().unlock();
            store.release(c);
            id = c.id();
            store.flush();
        }
        stale.mark(1005);
        try (ContainerStore store = new ContainerStore(dir, 4096, 2, 1 << 20, stale)) {
            Container c = store.acquire(id);
            assertThat(c).isNotNull();
            assertThat(store.loads()).isEqualTo(1);
            assertThat(c.find(f, 5)).as("stale fingerprint purged on load").isEqualTo(-1);
            assertThat(c.find(f, 6)).isEqualTo(6);
            assertThat(c.purgedSeq()).isEqualTo(stale.lastSeq());
            store.release(c);
        }
    }

    @Test
    void acquire_tornFile_isAbsent() throws Exception {
        SetStale stale = new SetStale();
        int id;
        try (ContainerStore store = new ContainerStore(dir, 4096, 2, 1 << 20, stale)) {
            Container c = store.create();
            c.appendSegment(fps(2, 100), 0, 100, pbns(1, 100), 1);
            store.release(c);
            id = c.id();
        }
        Path file = dir.resolve(ContainerFile.fileName(id));
        byte[] data = Files.readAllBytes(file);
        Files.write(file, java.util.Arrays.copyOf(data, data.length / 2));
        try (ContainerStore store = new ContainerStore(dir, 4096, 2, 1 << 20, stale)) {
            assertThat(store.acquire(id)).isNull();
            assertThat(store.absent()).isEqualTo(1);
            Container fresh = store.create();
            assertThat(fresh.id()).as("ids are never reused").isGreaterThan(id);
            store.release(fresh);
        }
    }

    @Test
    void create_beyondCacheBudget_evictsUnpinnedThroughBufferAndReloadsThem() {
        SetStale stale = new SetStale();
        try (ContainerStore store = new ContainerStore(dir, 4096, 2, 1 << 18, stale)) {
            int[] ids = new int[20];
            for (int i = 0; i < 20; i++) {
                Container c = store.create();
                c.appendSegment(fps(10 + i, 2000), 0, 2000, pbns(1 + i * 2000L, 2000), 1);
                ids[i] = c.id();
                store.release(c);
            }
            assertThat(store.evictions()).isPositive();
            assertThat(store.cachedBytes()).isLessThanOrEqualTo((1 << 18) + 200_000);
            store.flush();
            for (int i = 0; i < 20; i++) {
                Container c = store.acquire(ids[i]);
                assertThat(c).isNotNull();
                assertThat(c.find(fps(10 + i, 2000), 1999)).isEqualTo(1999);
                assertThat(c.pbn(1999)).isEqualTo(i * 2000L + 2000);
                store.release(c);
            }
        }
    }

    @Test
    void acquireIfCached_containerBackFromTheBuffer_keepsTheCacheWithinItsBytesWithoutLoading() {
        Container sized = new Container(1, 4096, 2);
        long empty = sized.memoryBytes();
        sized.appendSegment(fps(1, 2000), 0, 2000, pbns(1, 2000), 1);
        long full = sized.memoryBytes();
        // four full containers and an empty one; the secondary buffer (a quarter) holds one full container
        long limit = 4 * full + empty;
        SetStale stale = new SetStale();
        try (ContainerStore store = new ContainerStore(dir, 4096, 2, limit, stale)) {
            Container[] c = new Container[5];
            for (int i = 0; i < 5; i++) {
                c[i] = store.create();
                c[i].appendSegment(fps(10 + i, 2000), 0, 2000, pbns(1 + i * 2000L, 2000), 1);
                store.release(c[i]);
            }
            Container first = c[0];
            first.lock().writeLock().lock(); // the flusher cannot write it out of the buffer meanwhile
            try {
                Container sixth = store.create(); // 5 full + 1 empty: the least recently used, first, goes to the buffer
                assertThat(store.bufferBytes()).as("first is in the secondary buffer").isEqualTo(full);
                assertThat(store.cachedBytes()).isLessThanOrEqualTo(limit);
                long loads = store.loads();

                Container back = store.acquireIfCached(first.id());

                assertThat(back).isSameAs(first);
                assertThat(store.cachedBytes()).as("cache bytes after the probe path took first back").isLessThanOrEqualTo(limit);
                assertThat(store.loads()).as("nothing loaded").isEqualTo(loads);
                store.release(back);
                store.release(sixth);
            } finally {
                first.lock().writeLock().unlock();
            }
        }
    }

    /**
     * The probe's path must add no container I/O: a container it takes back from the buffer may
     * push a full dirty one out of the cache and the buffer over its quarter, and writing that one
     * out is the flusher's job, not the probe's (a container write is forced: milliseconds on the
     * worker's one lane).
     */
    @Test
    void acquireIfCached_containerBackFromTheBufferPushesAnotherOut_writesNothingOnTheCallersThread() {
        Container sized = new Container(1, 4096, 2);
        long empty = sized.memoryBytes();
        sized.appendSegment(fps(1, 10), 0, 10, pbns(1, 10), 1);
        long small = sized.memoryBytes();
        sized = new Container(2, 4096, 2);
        sized.appendSegment(fps(2, 2000), 0, 2000, pbns(1, 2000), 1);
        long full = sized.memoryBytes();
        // the small one, two full ones and an empty one do not fit; a full one alone overfills the buffer
        long limit = 2 * full + empty + small - 1;
        SetStale stale = new SetStale();
        try (ContainerStore store = new ContainerStore(dir, 4096, 2, limit, stale)) {
            Container s = store.create();
            s.appendSegment(fps(10, 10), 0, 10, pbns(1, 10), 1);
            store.release(s);
            Container big = store.create();
            big.appendSegment(fps(11, 2000), 0, 2000, pbns(100, 2000), 1);
            store.release(big);
            Container other = store.create();
            other.appendSegment(fps(12, 2000), 0, 2000, pbns(5000, 2000), 1);
            store.release(other);
            s.lock().writeLock().lock(); // the flusher cannot write s out of the buffer meanwhile
            try {
                Container last = store.create(); // the least recently used, s, goes to the buffer
                assertThat(store.bufferBytes()).as("s is in the secondary buffer").isEqualTo(small);
                long writes = store.writes();

                Container back = store.acquireIfCached(s.id()); // big, now least recently used, is pushed out

                assertThat(back).isSameAs(s);
                assertThat(store.cachedBytes()).isLessThanOrEqualTo(limit);
                assertThat(store.writes()).as("containers written by the probe's path").isEqualTo(writes);
                store.release(back);
                store.release(last);
            } finally {
                s.lock().writeLock().unlock();
            }
        }
    }

    @Test
    void tryWrite_containerHeldByAnotherWriter_fallsBackToReadOnly() throws Exception {
        SetStale stale = new SetStale();
        try (ContainerStore store = new ContainerStore(dir, 4096, 2, 1 << 20, stale)) {
            Container c = store.create();
            CountDownLatch held = new CountDownLatch(1);
            CountDownLatch done = new CountDownLatch(1);
            Thread other = new Thread(() -> {
                c.lock().writeLock().lock();
                held.countDown();
                try {
                    done.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } finally {
                    c.lock().writeLock().unlock();
                }
            });
            other.start();
            held.await();
            AtomicBoolean got = new AtomicBoolean(ContainerStore.tryWrite(c, 2_000_000));
            assertThat(got).isFalse();
            done.countDown();
            other.join();
            assertThat(ContainerStore.tryWrite(c, 2_000_000)).isTrue();
            c.lock().writeLock().unlock();
            store.release(c);
        }
    }
}
