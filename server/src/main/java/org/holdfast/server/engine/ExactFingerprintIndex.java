package org.holdfast.server.engine;

import java.util.concurrent.atomic.LongAdder;
import org.holdfast.common.id.Fingerprint;
import org.holdfast.server.store.Bytes;
import org.holdfast.server.store.MetadataBatch;
import org.holdfast.server.store.MetadataDb;

/**
 * The exact fingerprint index: every stored fingerprint → its PBN, in the {@code fpindex} column
 * family of the metadata database (key: the 32-byte fingerprint; value: u64 PBN, big-endian).
 *
 * <p>It finds every duplicate, at the cost of one on-disk lookup per fingerprint and an index that
 * grows with the store; it is the baseline that the Sungem engine's dedup efficiency is measured
 * against. When two PBNs hold the same fingerprint (two sessions stored it at once) the index keeps
 * the last one recorded; {@link #forget} removes an entry only if it still names the freed PBN.
 * Thread-safe: streams of different sessions run in parallel over the shared column family.
 */
public final class ExactFingerprintIndex implements FingerprintIndex {
    private final MetadataDb db;
    private final MetadataDb.Column cf = MetadataDb.Column.FPINDEX;
    private final LongAdder lookups = new LongAdder();
    private final LongAdder hits = new LongAdder();
    private final LongAdder recorded = new LongAdder();
    private final LongAdder forgotten = new LongAdder();
    private final LongAdder busyNanos = new LongAdder();

    /** Uses the metadata database's {@code fpindex} column family; the database stays owned by the caller. */
    public ExactFingerprintIndex(MetadataDb db) {
        this.db = db;
    }

    @Override
    public DedupStream openStream(String volumeName) {
        return new Stream();
    }

    @Override
    public synchronized void forget(long pbn, byte[] fps, int off) {
        byte[] key = new byte[Fingerprint.BYTES];
        System.arraycopy(fps, off, key, 0, Fingerprint.BYTES);
        byte[] v = db.get(cf, key);
        if (v != null && v.length == 8 && Bytes.getLong(v, 0) == pbn) {
            try (MetadataBatch b = new MetadataBatch()) {
                db.delete(b, cf, key);
                db.write(b, false);
            }
            forgotten.increment();
        }
    }

    @Override
    public void flush() {
        db.syncWal();
    }

    @Override
    public IndexStats stats() {
        return new IndexStats(lookups.sum(), hits.sum(), recorded.sum(), forgotten.sum(), 0, 0, 0, busyNanos.sum());
    }

    @Override
    public void close() {
        // the metadata database belongs to the caller; nothing of our own to release
    }

    private final class Stream implements DedupStream {
        private final byte[] key = new byte[Fingerprint.BYTES];
        private final byte[] value = new byte[8];

        @Override
        public void lookup(byte[] fps, int count, long[] pbns) {
            long t0 = System.nanoTime();
            int found = 0;
            for (int i = 0; i < count; i++) {
                System.arraycopy(fps, i * Fingerprint.BYTES, key, 0, Fingerprint.BYTES);
                int n = db.get(cf, key, value);
                pbns[i] = n == 8 ? Bytes.getLong(value, 0) : 0;
                if (pbns[i] != 0) {
                    found++;
                }
            }
            lookups.add(count);
            hits.add(found);
            busyNanos.add(System.nanoTime() - t0);
        }

        @Override
        public void storingWorkers(int count, long[] workers) {
            SungemDedupStream.noWorkers(count, workers);
        }

        @Override
        public void record(byte[] fps, int count, long[] pbns, boolean[] isNew) {
            long t0 = System.nanoTime();
            int n = 0;
            try (MetadataBatch b = new MetadataBatch()) {
                for (int i = 0; i < count; i++) {
                    if (isNew[i] && pbns[i] != 0) {
                        byte[] k = new byte[Fingerprint.BYTES];
                        System.arraycopy(fps, i * Fingerprint.BYTES, k, 0, Fingerprint.BYTES);
                        byte[] v = new byte[8];
                        Bytes.putLong(v, 0, pbns[i]);
                        db.put(b, cf, k, v);
                        n++;
                    }
                }
                if (n > 0) {
                    synchronized (ExactFingerprintIndex.this) {
                        db.write(b, false);
                    }
                }
            }
            recorded.add(n);
            busyNanos.add(System.nanoTime() - t0);
        }

        @Override
        public void close() {
        }
    }
}
