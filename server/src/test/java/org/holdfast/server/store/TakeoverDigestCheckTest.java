package org.holdfast.server.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.holdfast.server.store.object.ObjectStore;
import org.holdfast.server.store.object.S3ObjectStore;
import org.holdfast.server.store.object.S3ProxyFixture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The pre-claim SHA-256 check of a takeover on S3Proxy: an object read by ranged GETs of a chunk
 * (smaller than the object, its end not on a chunk boundary) matches its record with exactly its bytes
 * read once; one flipped byte in a middle chunk is named with the expected and found digest and size,
 * and the check stops there (the next log is not read).
 */
class TakeoverDigestCheckTest {
    private static final int CHUNK = 4096;
    private static final long WORKER = 3;

    @TempDir
    Path tmp;
    private S3ProxyFixture s3;
    private ObjectStore objects;

    @BeforeEach
    void start() throws Exception {
        s3 = S3ProxyFixture.start(tmp.resolve("s3"));
        objects = S3ObjectStore.open(s3.settings("d/"));
    }

    @AfterEach
    void stop() throws Exception {
        objects.close();
        s3.close();
    }

    private SealedLogs.Sealed put(String key, byte[] bytes) throws Exception {
        Path f = Files.write(tmp.resolve("put.hfl"), bytes);
        assertThat(objects.putIfAbsent(key, f)).isTrue();
        return new SealedLogs.Sealed(key, bytes.length, SealedLogs.sha256(f));
    }

    private static byte[] random(long seed, int n) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    @Test
    void chunkedRead_matches_readsEachByteOnce() throws Exception {
        String a = WorkerKeys.logKey(WORKER, 1, 1, 0);
        String b = WorkerKeys.logKey(WORKER, 1, 2, 0);
        SealedLogs records = new SealedLogs(List.of(put(a, random(1, 3 * CHUNK + 100)), put(b, random(2, CHUNK))));
        long before = objects.stats().getBytes();

        assertThat(TakeoverDigestCheck.check(WORKER, 2, List.of(a, b), objects, records, CHUNK)).isNull();
        assertThat(objects.stats().getBytes() - before).isEqualTo(4L * CHUNK + 100);
    }

    @Test
    void oneFlippedByte_namedWithBothDigestsAndTheSize_laterLogsNotRead() throws Exception {
        String a = WorkerKeys.logKey(WORKER, 1, 1, 0);
        String b = WorkerKeys.logKey(WORKER, 1, 2, 0);
        byte[] sealed = random(1, 3 * CHUNK + 100);
        SealedLogs.Sealed recA = put(a, sealed);
        SealedLogs records = new SealedLogs(List.of(recA, put(b, random(2, CHUNK))));
        byte[] rotted = sealed.clone();
        rotted[CHUNK + 7] ^= 0x10;
        objects.delete(a);
        Path f = Files.write(tmp.resolve("rotted.hfl"), rotted);
        assertThat(objects.putIfAbsent(a, f)).isTrue();
        long before = objects.stats().getBytes();

        String why = TakeoverDigestCheck.check(WORKER, 2, List.of(a, b), objects, records, CHUNK);

        assertThat(why).isEqualTo("log " + a + " in the bucket has SHA-256 " + HexFormat.of().formatHex(SealedLogs.sha256(f))
                + ", but the worker sealed it at " + sealed.length + " bytes, SHA-256 " + HexFormat.of().formatHex(recA.sha256()));
        assertThat(objects.stats().getBytes() - before).as("log b not read").isEqualTo(sealed.length);
    }
}
