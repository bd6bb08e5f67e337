package org.holdfast.server.ingest.cluster;

import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.holdfast.server.store.object.ObjectStore;

/**
 * A real object store whose downloads from the {@code gated}-th on wait until {@link #open()} (a slow
 * bucket under a copy's build, made observable without sleeps), and that counts the ranged GETs.
 * Every call goes to the real store.
 */
final class GatedDownloadStore extends ForwardingObjectStore {
    private final int gated;
    private final CountDownLatch gate = new CountDownLatch(1);
    private final CountDownLatch held = new CountDownLatch(1);
    private final AtomicInteger downloads = new AtomicInteger();
    private final AtomicInteger ranges = new AtomicInteger();
    private volatile boolean failing;

    GatedDownloadStore(ObjectStore real, int gated) {
        super(real);
        this.gated = gated;
    }

    /** Lets every download through from now on. */
    void open() {
        gate.countDown();
    }

    /** Fails the held download and every later one (the bucket went away). */
    void fail() {
        failing = true;
        gate.countDown();
    }

    /** Waits until the gated download waits at the gate. */
    void awaitHeld() throws InterruptedException {
        if (!held.await(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("no download reached the gate");
        }
    }

    /** Ranged GETs so far. */
    int ranges() {
        return ranges.get();
    }

    @Override
    public void download(String key, Path target) {
        if (downloads.incrementAndGet() >= gated) {
            held.countDown();
            try {
                if (!gate.await(60, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("the test never opened the gate");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
        if (failing) {
            throw new IllegalStateException("the test's bucket went away");
        }
        real.download(key, target);
    }

    @Override
    public byte[] getRange(String key, long offset, int length) {
        ranges.incrementAndGet();
        return real.getRange(key, offset, length);
    }

    @Override
    public void close() {
        gate.countDown();
        real.close();
    }
}
