package org.holdfast.server.ingest.cluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FsyncPolicy;
import org.holdfast.server.store.LogCache;
import org.holdfast.server.store.SealedLogs;
import org.holdfast.server.store.object.ObjectStore;
import org.holdfast.server.store.object.S3ObjectStore;
import org.holdfast.server.store.object.S3ProxyFixture;

/**
 * An S3Proxy bucket (keys under {@link #PREFIX}) and the range data of the worker nodes that archive
 * to it, for the takeover tests: {@link #close} closes the nodes, newest first, then the bucket.
 */
final class RangeBucket implements AutoCloseable {
    /** The key prefix the nodes archive under. */
    static final String PREFIX = "t/";

    final S3ProxyFixture s3;
    /** The test's own client of the bucket. */
    final ObjectStore look;
    private final Path tmp;
    private final List<AutoCloseable> open = new ArrayList<>();

    private RangeBucket(Path tmp, S3ProxyFixture s3) {
        this.tmp = tmp;
        this.s3 = s3;
        this.look = client();
    }

    /** S3Proxy started in {@code tmp}/s3; nodes named by {@link #node(String, Duration)} live in {@code tmp}/&lt;name&gt;. */
    static RangeBucket start(Path tmp) throws Exception {
        return new RangeBucket(tmp, S3ProxyFixture.start(tmp.resolve("s3")));
    }

    /** A new client of the bucket under {@link #PREFIX}. */
    ObjectStore client() {
        return S3ObjectStore.open(s3.settings(PREFIX));
    }

    /** A node's data-log settings (WorkerRangeData replaces the directory and range); no free-space reserve. */
    DataStore.Settings logSettings() {
        return new DataStore.Settings(tmp.resolve("unused"), 256L << 20, FsyncPolicy.COMMIT, 1 << 16, 0);
    }

    /** Node {@code name}'s range data (not identified yet), archiving through a new client, uploads stalling after {@code stall}. */
    WorkerRangeData node(String name, Duration stall) {
        return node(tmp.resolve(name).resolve(WorkerRangeData.DIRECTORY), this::client, stall);
    }

    /** The range data in {@code dir} (not identified yet), its bucket opened by {@code bucket}; closed with the fixture. */
    WorkerRangeData node(Path dir, Supplier<ObjectStore> bucket, Duration stall) {
        WorkerRangeData d = new WorkerRangeData(dir, logSettings(), new WorkerRangeData.Archive(bucket, LogCache.Settings.defaults(), stall));
        open.add(d);
        return d;
    }

    /** The records an honest worker reports of the logs {@code keys}: each object's size and SHA-256, as uploaded. */
    SealedLogs recordsOf(List<String> keys) throws IOException {
        List<SealedLogs.Sealed> out = new ArrayList<>();
        Path f = tmp.resolve("record.hfl");
        for (String k : keys) {
            look.download(k, f);
            out.add(new SealedLogs.Sealed(k, Files.size(f), SealedLogs.sha256(f)));
            Files.delete(f);
        }
        return new SealedLogs(out);
    }

    /** Puts {@code f}'s bytes in the bucket as object {@code key} instead of what it holds. */
    void replace(String key, Path f) {
        look.delete(key);
        if (!look.putIfAbsent(key, f)) {
            throw new IllegalStateException(key + " is there again");
        }
    }

    @Override
    public void close() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
        look.close();
        s3.close();
    }
}
