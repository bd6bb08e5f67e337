package org.holdfast.server.catalog;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import org.holdfast.common.protocol.SealedLogReport;
import org.holdfast.common.protocol.TakeoverRecords;
import org.holdfast.common.protocol.TakeoverRecordsPart;
import org.holdfast.server.store.CheckedIterator;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.MetadataBatch;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.MetadataDb.Column;
import org.holdfast.server.store.SealedLogs;
import org.rocksdb.ColumnFamilyHandle;

/**
 * The master's records of each worker's sealed, uploaded data logs (cluster version 7), in the
 * {@code cluster} column family (docs/architecture.md, "Sealed-log records"): key {@code 'd'} + u32
 * worker id + u32 log id (big-endian), value u8 version 1, u64 takeover epoch, u64 log epoch (the two
 * name the object), u64 sealed size, 32 bytes SHA-256 of the object; key {@code 'd'} + u32 worker id
 * alone: the worker's summary, u8 version 1, u32 logs it holds no digest of (absent: the worker never
 * reported). One record per live log id: a compacted copy replaces its log's record, a deleted log drops
 * it, so a worker has as many records as logs in the bucket (at most {@link SealedLogReport#MAX_LOGS}).
 */
public final class SealedLogStore {
    private static final byte PREFIX = 'd';
    private static final int VERSION = 1;
    static final int RECORD_BYTES = 1 + 8 + 8 + 8 + 32;
    static final int SUMMARY_BYTES = 1 + 4;

    private final MetadataDb db;
    private final ColumnFamilyHandle cf;

    public SealedLogStore(MetadataDb db) {
        this.db = db;
        this.cf = db.handle(Column.CLUSTER);
    }

    /**
     * Applies worker {@code worker}'s report (synced, one batch): a full report replaces every record of
     * the worker, an incremental one puts its logs and drops its dropped ids; the summary is replaced.
     *
     * @throws IllegalArgumentException (nothing changed) if an incremental report would leave the worker
     *     more than {@link SealedLogReport#MAX_LOGS} records: no worker reports that many (it sends a full
     *     report without logs instead), and one new log id after another would grow the catalog without end
     */
    public void apply(long worker, SealedLogReport r) {
        if (!r.full() && !r.sealed().isEmpty()) {
            refuseOverLimit(worker, r);
        }
        try (MetadataBatch b = new MetadataBatch()) {
            if (r.full()) {
                dropRecords(b, worker);
            }
            for (SealedLogReport.Sealed l : r.sealed()) {
                db.put(b, cf, key(worker, l.logId()), encode(l));
            }
            for (int id : r.dropped()) {
                db.delete(b, cf, key(worker, id));
            }
            db.put(b, cf, summaryKey(worker), ByteBuffer.allocate(SUMMARY_BYTES).put((byte) VERSION).putInt((int) r.unhashed()).array());
            db.write(b, true);
        }
    }

    private void refuseOverLimit(long worker, SealedLogReport r) {
        java.util.Set<Integer> ids = new java.util.HashSet<>();
        byte[] p = summaryKey(worker);
        try (CheckedIterator it = db.iterator(cf)) {
            for (it.seek(p); it.isValid() && it.key().length >= 5 && Arrays.equals(it.key(), 0, 5, p, 0, 5); it.next()) {
                if (it.key().length == 9) {
                    ids.add(ByteBuffer.wrap(it.key()).getInt(5));
                }
            }
        }
        for (SealedLogReport.Sealed l : r.sealed()) {
            ids.add(l.logId());
        }
        ids.removeAll(r.dropped());
        if (ids.size() > SealedLogReport.MAX_LOGS) {
            throw new IllegalArgumentException("worker " + worker + "'s sealed-log report would leave it " + ids.size() + " records,"
                    + " more than " + SealedLogReport.MAX_LOGS + " (no worker reports that many logs); nothing was recorded: the link is"
                    + " closed, and the worker's next link starts with a full report. If it repeats, check what connects with this"
                    + " worker's token");
        }
    }

    /** Puts into {@code b} the drop of worker {@code worker}'s records and summary (the worker is removed). */
    public void dropWorker(MetadataBatch b, long worker) {
        dropRecords(b, worker);
        db.delete(b, cf, summaryKey(worker));
    }

    private void dropRecords(MetadataBatch b, long worker) {
        byte[] p = summaryKey(worker);
        try (CheckedIterator it = db.iterator(cf)) {
            for (it.seek(p); it.isValid() && it.key().length >= 5 && Arrays.equals(it.key(), 0, 5, p, 0, 5); it.next()) {
                if (it.key().length == 9) {
                    db.delete(b, cf, it.key());
                }
            }
        }
    }

    /**
     * Worker {@code worker}'s records ({@link SealedLogs#NONE} if it never reported). An unreadable record
     * is corrupt data: a copy that skipped it would refuse that log's blocks, or serve a log unchecked.
     */
    public SealedLogs forWorker(long worker) {
        byte[] summary = db.get(cf, summaryKey(worker));
        if (summary == null) {
            return SealedLogs.NONE;
        }
        if (summary.length != SUMMARY_BYTES || summary[0] != VERSION) {
            throw unreadable(summaryKey(worker), summary);
        }
        List<SealedLogs.Sealed> out = new ArrayList<>();
        byte[] p = summaryKey(worker);
        try (CheckedIterator it = db.iterator(cf)) {
            for (it.seek(p); it.isValid() && it.key().length >= 5 && Arrays.equals(it.key(), 0, 5, p, 0, 5); it.next()) {
                if (it.key().length == 9) {
                    out.add(decode(worker, it.key(), it.value()));
                }
            }
        }
        return new SealedLogs(out, ByteBuffer.wrap(summary).getInt(1) == 0);
    }

    /**
     * One part of worker {@code worker}'s records answering TAKEOVER_RECORDS {@code q} (cluster version 7): at
     * most {@link TakeoverRecordsPart#MAX_LOGS} records with a log id above the request's, in log id order;
     * status none if the worker never reported. Unreadable records are corrupt data, as for {@link #forWorker}.
     */
    public TakeoverRecordsPart part(long worker, TakeoverRecords q) {
        byte[] summary = db.get(cf, summaryKey(worker));
        if (summary == null) {
            return TakeoverRecordsPart.none(q.requestId());
        }
        if (summary.length != SUMMARY_BYTES || summary[0] != VERSION) {
            throw unreadable(summaryKey(worker), summary);
        }
        List<SealedLogReport.Sealed> out = new ArrayList<>();
        boolean more = false;
        byte[] p = summaryKey(worker);
        try (CheckedIterator it = db.iterator(cf)) {
            // log ids are big-endian in the key, so from the one after the request's the iterator runs in log id order
            for (it.seek(key(worker, q.afterLogId() + 1)); it.isValid() && it.key().length >= 5 && Arrays.equals(it.key(), 0, 5, p, 0, 5);
                 it.next()) {
                if (it.key().length != 9) {
                    continue;
                }
                if (out.size() == TakeoverRecordsPart.MAX_LOGS) {
                    more = true;
                    break;
                }
                out.add(decodeWire(it.key(), it.value()));
            }
        }
        return new TakeoverRecordsPart(q.requestId(), TakeoverRecordsPart.RECORDS, ByteBuffer.wrap(summary).getInt(1) == 0, more, out, "");
    }

    static byte[] summaryKey(long worker) {
        return ByteBuffer.allocate(5).put(PREFIX).putInt((int) worker).array();
    }

    static byte[] key(long worker, int logId) {
        return ByteBuffer.allocate(9).put(PREFIX).putInt((int) worker).putInt(logId).array();
    }

    static byte[] encode(SealedLogReport.Sealed l) {
        return ByteBuffer.allocate(RECORD_BYTES).put((byte) VERSION).putLong(l.epoch()).putLong(l.logEpoch()).putLong(l.size())
                .put(l.sha256()).array();
    }

    private SealedLogs.Sealed decode(long worker, byte[] key, byte[] v) {
        SealedLogReport.Sealed l = decodeWire(key, v);
        return SealedLogs.Sealed.of(worker, l);
    }

    private SealedLogReport.Sealed decodeWire(byte[] key, byte[] v) {
        ByteBuffer b = ByteBuffer.wrap(v);
        int logId = ByteBuffer.wrap(key).getInt(5);
        if (v.length != RECORD_BYTES || v[0] != VERSION || b.getLong(1) < 1 || b.getLong(9) < 0 || b.getLong(17) < 0 || logId < 1) {
            throw unreadable(key, v);
        }
        return new SealedLogReport.Sealed(logId, b.getLong(1), b.getLong(9), b.getLong(17), Arrays.copyOfRange(v, 25, RECORD_BYTES));
    }

    private CorruptDataException unreadable(byte[] key, byte[] v) {
        return new CorruptDataException("cluster", db.path(), "sealed-log " + HexFormat.of().formatHex(key), "the master's record of"
                + " a worker's sealed logs is unreadable (" + v.length + " bytes, version " + (v.length > 0 ? v[0] : -1) + "; this"
                + " master reads version " + VERSION + "): the worker's logs cannot be checked. Restore the catalog from a backup");
    }
}
