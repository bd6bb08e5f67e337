package org.holdfast.server.store;

import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.Random;
import org.holdfast.server.store.object.S3ObjectStore;
import org.holdfast.server.store.object.S3ProxyFixture;

/** For tests of backend s3 on a real data store: an S3Proxy and a catalog under one directory, and 64 KiB logs there. */
final class ArchiveFixture implements AutoCloseable {
    static final int BS = 4096;

    final Path dir;
    S3ProxyFixture s3;
    final MetadataDb db;

    ArchiveFixture(Path dir) throws Exception {
        this.dir = dir;
        this.s3 = S3ProxyFixture.start(dir.resolve("s3"));
        this.db = MetadataDb.open(dir.resolve("catalog"));
    }

    /** 64 KiB logs (a roll every 15 raw blocks), fsync on commit. */
    DataStore.Settings settings() {
        return new DataStore.Settings(dir.resolve("data"), 64 << 10, FsyncPolicy.COMMIT, 64, 0);
    }

    /** An archive under prefix {@code t/} and node name {@code node}, with the cache set by {@code cache}. */
    LogArchive archive(String node, LogCache.Settings cache) {
        return new LogArchive(S3ObjectStore.open(s3.settings("t/")), node, cache);
    }

    /** Fills {@code payloads} with random blocks, appends them raw and syncs; returns their PBNs. */
    static long[] write(DataStore store, byte[][] payloads, long seed) throws Exception {
        long[] pbns = new long[payloads.length];
        Random r = new Random(seed);
        for (int i = 0; i < payloads.length; i++) {
            payloads[i] = new byte[BS];
            r.nextBytes(payloads[i]);
            byte[] fp = MessageDigest.getInstance("SHA-256").digest(payloads[i]);
            pbns[i] = store.append(fp, 0, payloads[i], 0, BS, FormatVersions.CODEC_RAW, BS);
        }
        store.sync();
        return pbns;
    }

    @Override
    public void close() throws Exception {
        db.close();
        s3.close();
    }
}
