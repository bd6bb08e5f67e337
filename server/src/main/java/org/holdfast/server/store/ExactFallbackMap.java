package org.holdfast.server.store;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import org.rocksdb.CompressionType;
import org.rocksdb.FlushOptions;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * The Bloom-guided fallback of the Sungem engine (engine.SungemFingerprintIndex): an on-disk exact
 * map from fingerprint to PBN of every fingerprint the engine recorded as new, looked up only for
 * fingerprints that the loaded containers did not resolve but that the Bloom filter chain has seen
 * recently. Off by default; a setting ({@code exactFallback}) for workloads where sampling alone
 * falls short. It keeps its own RocksDB (not the catalog's), which is why it lives in store.
 *
 * <p>We own the RocksDB handle, its options and write options; {@link #close} releases them in
 * reverse order of creation. Deletes are written synchronously: a forgotten PBN must not come back
 * after a crash.
 */
public final class ExactFallbackMap implements AutoCloseable {
    private static final String STORE = "sungem-exact-fallback";
    private final Path dir;
    private final Options options;
    private final WriteOptions writes;
    private final WriteOptions syncWrites;
    private final RocksDB db;
    private final byte[] key = new byte[32];
    private final byte[] value = new byte[8];
    private final ByteBuffer valueBuf = ByteBuffer.wrap(value).order(ByteOrder.BIG_ENDIAN);

    /** Opens (creating if needed) the map in {@code dir}; the caller owns it and closes it. */
    public ExactFallbackMap(Path dir) {
        RocksDB.loadLibrary();
        this.dir = dir;
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw StoreException.translate(STORE, dir.toString(), null, e);
        }
        // Random 32-byte keys do not compress; the map is a hint, so its puts skip the WAL: an entry
        // lost in a crash only costs a missed duplicate. Deletes keep the WAL and are synced.
        options = new Options().setCreateIfMissing(true).setCompressionType(CompressionType.NO_COMPRESSION)
                .setWriteBufferSize(64L << 20).setMaxWriteBufferNumber(4).setMaxBackgroundJobs(2);
        writes = new WriteOptions().setDisableWAL(true);
        syncWrites = new WriteOptions().setSync(true);
        try {
            db = RocksDB.open(options, dir.toString());
        } catch (RocksDBException e) {
            syncWrites.close();
            writes.close();
            options.close();
            throw StoreException.translate(STORE, dir.toString(), null, e);
        }
    }

    /** PBN of the fingerprint at index {@code i} of {@code fps}, or 0. */
    public synchronized long get(byte[] fps, int i) {
        System.arraycopy(fps, i * 32, key, 0, 32);
        try {
            byte[] v = db.get(key);
            return v == null || v.length != 8 ? 0 : ByteBuffer.wrap(v).order(ByteOrder.BIG_ENDIAN).getLong();
        } catch (RocksDBException e) {
            throw StoreException.translate(STORE, dir.toString(), "fingerprint", e);
        }
    }

    /** Adds the entries stored new ({@code isNew[i]}) of a recorded segment. */
    public synchronized void putNew(byte[] fps, int count, long[] pbns, boolean[] isNew) {
        try (WriteBatch batch = new WriteBatch()) {
            int n = 0;
            for (int i = 0; i < count; i++) {
                if (isNew[i] && pbns[i] > 0) {
                    // The batch copies key and value, so one pair of arrays serves every entry.
                    System.arraycopy(fps, i * 32, key, 0, 32);
                    valueBuf.putLong(0, pbns[i]);
                    batch.put(key, value);
                    n++;
                }
            }
            if (n > 0) {
                db.write(writes, batch);
            }
        } catch (RocksDBException e) {
            throw StoreException.translate(STORE, dir.toString(), "batch", e);
        }
    }

    /** Removes the fingerprint at {@code fps[off..off+32)} if it maps to {@code pbn}. */
    public synchronized void delete(long pbn, byte[] fps, int off) {
        byte[] k = new byte[32];
        System.arraycopy(fps, off, k, 0, 32);
        try {
            byte[] v = db.get(k);
            if (v != null && v.length == 8 && ByteBuffer.wrap(v).getLong() == pbn) {
                db.delete(syncWrites, k);
            }
        } catch (RocksDBException e) {
            throw StoreException.translate(STORE, dir.toString(), "pbn " + pbn, e);
        }
    }

    /** Forces the write-ahead log (the deletes; puts skip it and survive a clean close). */
    public void flush() {
        try {
            db.syncWal();
        } catch (RocksDBException e) {
            throw StoreException.translate(STORE, dir.toString(), null, e);
        }
    }

    @Override
    public void close() {
        try (FlushOptions f = new FlushOptions().setWaitForFlush(true)) {
            db.flush(f); // puts skipped the WAL: persist them on a clean shutdown
        } catch (RocksDBException e) {
            // Losing hint entries costs dedup only; still release the handles below.
        }
        db.close();
        syncWrites.close();
        writes.close();
        options.close();
    }
}
