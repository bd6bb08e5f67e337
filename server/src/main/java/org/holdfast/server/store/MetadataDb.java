package org.holdfast.server.store;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import org.rocksdb.BlockBasedTableConfig;
import org.rocksdb.BloomFilter;
import org.rocksdb.ColumnFamilyDescriptor;
import org.rocksdb.ColumnFamilyHandle;
import org.rocksdb.ColumnFamilyOptions;
import org.rocksdb.CompressionType;
import org.rocksdb.DBOptions;
import org.rocksdb.FlushOptions;
import org.rocksdb.InfoLogLevel;
import org.rocksdb.LRUCache;
import org.rocksdb.ReadOptions;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.RocksIterator;
import org.rocksdb.WriteOptions;

/**
 * The one RocksDB of the appliance (data-dir/catalog) and every native handle that belongs to it.
 *
 * <p>We own every handle created here and close them in {@link #close()} in this order: column
 * family handles, the database, then the options objects and the event listener ({@link CatalogHealth})
 * (RocksDB requires handles to go before the database and options, filter and cache after it). Callers own the iterators and batches they create and must
 * close them first. The write-ahead log stays on: nothing else holds a durable copy of this data;
 * an orderly close flushes every memtable first, so the log is empty at rest.
 *
 * <p>Column families: {@link Column}; further ones (for example for GC bookkeeping) can be asked
 * for by name at open time.
 */
public final class MetadataDb implements AutoCloseable {

    /** The column families every server has. */
    public enum Column {
        VOLUMES("volumes"), SNAPSHOTS("snapshots"), MAP("map"), LOCATIONS("locations"), FPINDEX("fpindex"), META("meta"),
        /** The audit log (catalog/AuditStore); opened by every tool so that none trips over it. */
        AUDIT("audit"),
        /** PBN to possession fingerprint (store/PossessionIndex), for proofs of possession. */
        POSSESSION("possession"),
        /** Users (key: name), see catalog.CredentialCodec. */
        USERS("users"),
        /** API tokens (key: id), see catalog.CredentialCodec. */
        TOKENS("tokens"),
        /** Job history (key: job id), see catalog.JobStore. */
        JOBS("jobs"),
        /** Named retention policies (key: name). */
        POLICIES("policies"),
        /** Volume settings the operator sets over REST (quota, named policy) and backup outcomes. */
        VOLUME_SETTINGS("volume-settings"),
        /** Daily statistics series (key: day). */
        STATS("stats"),
        /** Agent connections (key: token id). */
        AGENTS("agents"),
        /** Bad blocks ('B' + PBN, store.BadBlocks) and verification records ('V', 'S', store.VerifyLedger). */
        VERIFY("verify"),
        /** Master/worker mode: the master's worker assignments (key: 'w' + worker id), catalog.ClusterStore. */
        CLUSTER("cluster"),
        /** Distributed GC: the workers' shares of GC operations not yet acknowledged (key: u32 worker id + u64 delta id), catalog.GcOutbox. */
        GC_OUTBOX("gc-outbox");

        private final String cfName;

        Column(String cfName) {
            this.cfName = cfName;
        }

        /**
         * True for the column families with Bloom filters (point lookups of keys that are mostly
         * absent). Not {@code locations} and {@code possession}: their keys are PBNs, handed out in
         * increasing order, so a new PBN lies above every table file's key range, which RocksDB
         * checks before any filter; the filters cost 1.25 bytes per block each at rest.
         */
        boolean filtered() {
            return this == MAP || this == FPINDEX;
        }

        public String cfName() {
            return cfName;
        }
    }

    private static final String STORE = "metadata-db";
    private static final System.Logger LOG = System.getLogger(MetadataDb.class.getName());
    /** Write-ahead log cap: beyond it RocksDB flushes the column families that hold the oldest log file. */
    static final long MAX_TOTAL_WAL_BYTES = 16L << 20;

    /**
     * Table block size. 16 KiB instead of RocksDB's 4 KiB: zstd's per-block tables and the index
     * are spread over four times the entries, 3.9 bytes less per stored block at rest (the footprint
     * test's catalog fully compacted: 66.7 bytes per live block at 4 KiB, 65.2 at 8, 62.5 at 16, 59.9
     * at 32; docs/benchmarks.md), for a larger read and decompression per uncached point lookup.
     */
    static final long TABLE_BLOCK_BYTES = 16L << 10;

    private static ColumnFamilyOptions tableOptions(BlockBasedTableConfig table) {
        // optimizeLevelStyleCompaction leaves levels 0 and 1 uncompressed (compression_per_level);
        // the empty list makes every level use the compression type below. It also sets
        // min_write_buffer_number_to_merge = 2, under which a manual flush (close, a catalog backup)
        // can wait forever for a memtable that never becomes flushable (facebook/rocksdb#13280,
        // #12094, #12166): a server stopped with SIGTERM hung in close. 1 flushes each memtable alone.
        table.setBlockSize(TABLE_BLOCK_BYTES);
        return new ColumnFamilyOptions().optimizeLevelStyleCompaction().setMinWriteBufferNumberToMerge(1).setTableFormatConfig(table)
                .setCompressionPerLevel(List.of()).setCompressionType(CompressionType.ZSTD_COMPRESSION);
    }

    static {
        RocksDB.loadLibrary();
    }

    private final String path;
    private final CatalogHealth health;
    private final DBOptions dbOptions;
    private final RocksInfoLog infoLog;
    private final ColumnFamilyOptions cfOptions;
    private final ColumnFamilyOptions plainCfOptions;
    private final LRUCache blockCache;
    private final BloomFilter bloom;
    private final WriteOptions asyncWrite;
    private final WriteOptions syncWrite;
    private final ReadOptions readOptions;
    private final RocksDB db;
    private final Map<Column, ColumnFamilyHandle> columns = new EnumMap<>(Column.class);
    private final Map<String, ColumnFamilyHandle> extra = new LinkedHashMap<>();
    private final List<ColumnFamilyHandle> allHandles;
    private final boolean syncCommits;
    /**
     * Calls into the native database running now ({@link #enter()}); close() waits for none to run.
     * One counter rather than a read-write lock: a lock's per-thread bookkeeping cost several times
     * more per call, and gets and batch puts run per block.
     */
    private final AtomicLong inFlight = new AtomicLong();
    private volatile boolean closed;
    /** False only in tests: close() then skips its flush, as after a flush that never finished. */
    volatile boolean flushAtClose = true;

    private MetadataDb(Path dir, List<String> extraColumns, boolean syncCommits) {
        this.path = dir.toString();
        this.health = new CatalogHealth(path);
        this.syncCommits = syncCommits;
        try {
            Files.createDirectories(dir);
        } catch (Exception e) {
            throw fail(null, e);
        }
        // No preallocation: RocksDB would fallocate a write-ahead log of 1.1 write buffers (141 MiB
        // with the 128 MiB buffers below) and a 4 MiB manifest, so an empty data directory took 145 MiB
        // (docs/operations.md, "Disk full"). Files now grow as they are written.
        // The WAL is capped (a larger one forces a flush of the column families that pin its oldest
        // file) and emptied by the flush in close(); the info log's warnings and errors go to the
        // server's log and no LOG file is written (even at warning level every open wrote ~140 KiB of
        // options into it): at rest the catalog is its tables, not logs (docs/operations.md, "Space
        // beside the data logs").
        infoLog = new RocksInfoLog();
        dbOptions = new DBOptions().setCreateIfMissing(true).setCreateMissingColumnFamilies(true)
                .setLogger(infoLog).setInfoLogLevel(InfoLogLevel.WARN_LEVEL)
                .setMaxTotalWalSize(MAX_TOTAL_WAL_BYTES)
                .setRecycleLogFileNum(0).setAllowFAllocate(false).setManifestPreallocationSize(64L << 10)
                // close() flushes itself, bounded; every write keeps the WAL, so RocksDB's own close-time flush has nothing to add
                .setAvoidFlushDuringShutdown(true)
                .setListeners(List.of(health));
        // One block cache for every column family; Bloom filters only on the column families that
        // are asked for absent keys inside their key range on the hot path (every new fingerprint in
        // fpindex, new LBNs in map), so the other tables carry no filter blocks (Column.filtered).
        // Tables are zstd-compressed on every level: what a flush at close writes stays small too.
        blockCache = new LRUCache(64L << 20);
        bloom = new BloomFilter(10, false);
        cfOptions = tableOptions(new BlockBasedTableConfig().setBlockCache(blockCache).setFilterPolicy(bloom));
        plainCfOptions = tableOptions(new BlockBasedTableConfig().setBlockCache(blockCache));
        asyncWrite = new WriteOptions();
        syncWrite = new WriteOptions().setSync(syncCommits);
        readOptions = new ReadOptions();
        List<ColumnFamilyDescriptor> descriptors = new ArrayList<>();
        descriptors.add(new ColumnFamilyDescriptor(RocksDB.DEFAULT_COLUMN_FAMILY, plainCfOptions));
        for (Column c : Column.values()) {
            descriptors.add(new ColumnFamilyDescriptor(bytes(c.cfName()), c.filtered() ? cfOptions : plainCfOptions));
        }
        for (String name : extraColumns) {
            descriptors.add(new ColumnFamilyDescriptor(bytes(name), cfOptions));
        }
        List<String> known = new ArrayList<>(extraColumns);
        for (Column c : Column.values()) {
            known.add(c.cfName());
        }
        try {
            CatalogColumnCheck.refuseUnknown(dir, known);
        } catch (StoreException e) {
            closeOptions();
            throw e;
        }
        List<ColumnFamilyHandle> handles = new ArrayList<>();
        try {
            db = RocksDB.open(dbOptions, path, descriptors, handles);
        } catch (RocksDBException e) {
            closeOptions();
            if (!isCorruption(e) && String.valueOf(e.getMessage()).contains("lock")) {
                throw new StoreException(STORE, path, null, "database is locked by another process (is another server running?)", e);
            }
            throw fail(null, e);
        }
        RocksInfoLog.dropOldFiles(dir); // under the database's lock: nobody else writes them now
        allHandles = List.copyOf(handles);
        int i = 1;
        for (Column c : Column.values()) {
            columns.put(c, handles.get(i++));
        }
        for (String name : extraColumns) {
            extra.put(name, handles.get(i++));
        }
    }

    /** What an operator runs when the catalog is corrupt (docs/operations.md, troubleshooting). */
    public static final String REPAIR_HINT = "stop the server and restore the catalog from its newest backup: holdfast-server"
            + " catalog-restore --data-dir <data-dir> --from <holdfast.catalog.backup.directory> (it moves this catalog aside and"
            + " rebuilds gc/; the catalog cannot be rebuilt from the data logs: they hold blocks, not volumes and their maps);"
            + " without a catalog backup, restore <data-dir>/catalog from a copy taken with the data logs, then run"
            + " holdfast-server gc-rebuild --data-dir <data-dir> and holdfast-server fsck <data-dir>";

    /**
     * Reads every table file of the catalog and checks its block checksums (RocksDB's
     * {@code VerifyChecksum}), so that a damaged file refuses the start instead of failing a
     * restore or an fsck later. Cost: one sequential read of the catalog.
     *
     * @throws CorruptDataException naming the damaged file
     */
    public void verifyChecksums() {
        enter();
        try {
            db.verifyChecksum();
        } catch (RocksDBException e) {
            throw fail(null, e);
        } finally {
            inFlight.decrementAndGet();
        }
    }

    /**
     * Translates a RocksDB or I/O failure once: corruption becomes a {@link CorruptDataException}
     * naming the file; any failure while a background error has stopped the database becomes
     * {@link CatalogStoppedException}, which says why and what to do.
     */
    private StoreException fail(String key, Exception e) {
        String stopped = health.stoppedReason();
        if (stopped != null && e instanceof RocksDBException) {
            return new CatalogStoppedException(path, stopped, e);
        }
        return translate(STORE, path, key, e);
    }

    /** The watch on background errors: why the database takes no writes now, if it does not. */
    public CatalogHealth health() {
        return health;
    }

    /** As {@link StoreException#translate}, except that RocksDB corruption becomes a {@link CorruptDataException} naming the file. */
    static StoreException translate(String store, String path, String key, Exception e) {
        if (e instanceof RocksDBException r && isCorruption(r)) {
            String msg = String.valueOf(r.getMessage());
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("(/\\S+?\\.(sst|log|ldb)|/\\S*MANIFEST-\\d+)").matcher(msg);
            String file = m.find() ? m.group(1) : path;
            return new CorruptDataException(store, file, key, "the catalog database is corrupt (" + msg + "); " + REPAIR_HINT);
        }
        return StoreException.translate(store, path, key, e);
    }

    static boolean isCorruption(RocksDBException e) {
        return (e.getStatus() != null && e.getStatus().getCode() == org.rocksdb.Status.Code.Corruption)
                || String.valueOf(e.getMessage()).startsWith("Corruption:");
    }

    /** Opens (creating if needed) the database in {@code dir}; {@code syncCommits} false only for FsyncPolicy.NONE. */
    public static MetadataDb open(Path dir, List<String> extraColumns, boolean syncCommits) {
        return new MetadataDb(dir, extraColumns, syncCommits);
    }

    /** Opens with the built-in column families only and synced commits. */
    public static MetadataDb open(Path dir) {
        return open(dir, List.of(), true);
    }

    public String path() {
        return path;
    }

    public ColumnFamilyHandle handle(Column column) {
        return columns.get(column);
    }

    /** A column family asked for by name at open time. */
    public ColumnFamilyHandle handle(String extraColumn) {
        ColumnFamilyHandle h = extra.get(extraColumn);
        if (h == null) {
            throw new IllegalArgumentException("column family '" + extraColumn + "' was not opened");
        }
        return h;
    }

    /** The value of {@code key}, or null. Allocates; use {@link #get(ColumnFamilyHandle, byte[], byte[])} on hot paths. */
    public byte[] get(ColumnFamilyHandle cf, byte[] key) {
        enter();
        try {
            return db.get(cf, readOptions, key);
        } catch (RocksDBException e) {
            throw fail(hex(key), e);
        } finally {
            inFlight.decrementAndGet();
        }
    }

    /** Reads the value of {@code key} into {@code value}; returns its full length, or -1 if absent. */
    public int get(ColumnFamilyHandle cf, byte[] key, byte[] value) {
        enter();
        try {
            return db.get(cf, readOptions, key, value);
        } catch (RocksDBException e) {
            throw fail(hex(key), e);
        } finally {
            inFlight.decrementAndGet();
        }
    }

    /** A single unsynced put (the WAL still records it). */
    public void put(ColumnFamilyHandle cf, byte[] key, byte[] value) {
        enter();
        try {
            db.put(cf, asyncWrite, key, value);
        } catch (RocksDBException e) {
            throw fail(hex(key), e);
        } finally {
            inFlight.decrementAndGet();
        }
    }

    /** Writes a batch atomically; {@code sync} forces the WAL to disk before returning (unless fsync is off). */
    public void write(MetadataBatch batch, boolean sync) {
        enter();
        try {
            db.write(sync ? syncWrite : asyncWrite, batch.rocks());
        } catch (RocksDBException e) {
            throw fail("batch of " + batch.count(), e);
        } finally {
            inFlight.decrementAndGet();
        }
    }

    /**
     * Counts a native call in, or refuses it once {@link #close()} has begun: a call racing the close
     * must fail cleanly, never reach a freed native handle (a crash of the JVM). The caller counts
     * out with {@code inFlight.decrementAndGet()} in a finally block. Increment before the check:
     * either this call sees {@code closed}, or close() sees this call in the count.
     */
    private void enter() {
        inFlight.incrementAndGet();
        if (closed) {
            inFlight.decrementAndGet();
            throw new CatalogClosedException(path, null);
        }
    }

    /** Forces everything written so far, synced or not, to disk. */
    public void syncWal() {
        if (!syncCommits) {
            return;
        }
        enter();
        try {
            db.flushWal(true);
        } catch (RocksDBException e) {
            throw fail(null, e);
        } finally {
            inFlight.decrementAndGet();
        }
    }

    /**
     * A new iterator over one column family; the caller owns it and must close it. It counts as a
     * running call until closed (close() waits for it: its native state points into the database),
     * and every step after close() began is refused, so a scan running into a stop ends cleanly.
     */
    public CheckedIterator iterator(ColumnFamilyHandle cf) {
        enter();
        try {
            RocksIterator it = db.newIterator(cf, readOptions);
            return new CheckedIterator(it, STORE, path, this);
        } catch (RuntimeException | Error e) {
            inFlight.decrementAndGet();
            throw e;
        }
    }

    /** Counts out an iterator of {@link #iterator(ColumnFamilyHandle)}; once per iterator, after its native close. */
    void iteratorClosed() {
        inFlight.decrementAndGet();
    }

    /** A native call on the raw database that needs no handle of ours (a backup engine's). */
    @FunctionalInterface
    interface RocksCall<T> {
        T call(RocksDB rocks) throws RocksDBException;
    }

    /**
     * Runs {@code call} on the database as a counted call (close() waits for it, or refuses it with
     * {@link CatalogClosedException}): the only way to the raw database, for {@link CatalogBackups}.
     */
    <T> T withRocks(RocksCall<T> call) throws RocksDBException {
        enter();
        try {
            return call.call(db);
        } finally {
            inFlight.decrementAndGet();
        }
    }

    /** A u64 from the meta column family, or {@code dflt}. */
    public long metaLong(String key, long dflt) {
        return MetaLong.decode(get(handle(Column.META), bytes(key)), path, key, dflt);
    }

    /** Adds a u64 meta value to a batch. */
    public void putMetaLong(MetadataBatch batch, String key, long value) {
        enter(); // close() frees the column family handle
        try {
            batch.rocks().put(handle(Column.META), bytes(key), MetaLong.encode(value));
        } catch (RocksDBException e) {
            throw fail(key, e);
        } finally {
            inFlight.decrementAndGet();
        }
    }

    /** Adds a put to a batch, translating the (theoretical) native failure. */
    public void put(MetadataBatch batch, ColumnFamilyHandle cf, byte[] key, byte[] value) {
        enter(); // close() frees the column family handle
        try {
            batch.rocks().put(cf, key, value);
        } catch (RocksDBException e) {
            throw fail(hex(key), e);
        } finally {
            inFlight.decrementAndGet();
        }
    }

    /** Adds a delete to a batch. */
    public void delete(MetadataBatch batch, ColumnFamilyHandle cf, byte[] key) {
        enter(); // close() frees the column family handle
        try {
            batch.rocks().delete(cf, key);
        } catch (RocksDBException e) {
            throw fail(hex(key), e);
        } finally {
            inFlight.decrementAndGet();
        }
    }

    // By Column: for layers outside store and catalog, which never hold a RocksDB handle.

    /** As {@link #get(ColumnFamilyHandle, byte[])} on a built-in column family. */
    public byte[] get(Column column, byte[] key) {
        return get(handle(column), key);
    }

    /** As {@link #get(ColumnFamilyHandle, byte[], byte[])} on a built-in column family. */
    public int get(Column column, byte[] key, byte[] value) {
        return get(handle(column), key, value);
    }

    /** As {@link #iterator(ColumnFamilyHandle)} on a built-in column family. */
    public CheckedIterator iterator(Column column) {
        return iterator(handle(column));
    }

    /** As {@link #put(MetadataBatch, ColumnFamilyHandle, byte[], byte[])} on a built-in column family. */
    public void put(MetadataBatch batch, Column column, byte[] key, byte[] value) {
        put(batch, handle(column), key, value);
    }

    /** As {@link #delete(MetadataBatch, ColumnFamilyHandle, byte[])} on a built-in column family. */
    public void delete(MetadataBatch batch, Column column, byte[] key) {
        delete(batch, handle(column), key);
    }

    /** A RocksDB property (for metrics and tests), or null (also once closing: a metrics scrape may come late). */
    public String property(String name) {
        inFlight.incrementAndGet();
        try {
            if (closed) {
                return null;
            }
            return db.getProperty(name);
        } catch (RocksDBException e) {
            return null;
        } finally {
            inFlight.decrementAndGet();
        }
    }

    public boolean isClosed() {
        return closed;
    }

    /** How long {@link #close()} waits for writes still running, then for its flush. */
    static final long CLOSE_WAIT_MILLIS = 20_000;

    /**
     * Idempotent; refuses new writes, waits for those running, flushes (bounded), then closes
     * handles, database and options. Never waits without bound: a server stopped with SIGTERM must
     * exit (docs/operations.md, "Stopping the server").
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true; // enter() refuses every call from here on
        try {
            closeInOrder();
        } finally {
            if (interruptedInClose) {
                Thread.currentThread().interrupt(); // kept for the caller; the waits below are bounded without it
            }
        }
    }

    /** Set when close()'s waits were interrupted: they keep waiting (bounded), so an interrupted stop still closes in order. */
    private boolean interruptedInClose;

    private void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            interruptedInClose = true;
        }
    }

    private void closeInOrder() {
        if (!awaitQuiet()) {
            // Closing under a running write would free what it uses (a crash in native code). Every
            // write acknowledged so far is in the synced WAL; the process exit releases the database.
            LOG.log(System.Logger.Level.WARNING, "catalog " + path + ": a call (a write, an open iterator, a catalog backup) still runs "
                    + CLOSE_WAIT_MILLIS / 1000
                    + " s after the close began; leaving the database open (the write-ahead log is synced and is replayed at the next start)");
            syncWalQuietly();
            return;
        }
        if (flushAtClose) {
            flushBounded();
        } else {
            syncWalQuietly();
        }
        for (ColumnFamilyHandle h : allHandles) {
            h.close();
        }
        db.close();
        closeOptions();
    }

    /** Waits up to {@link #CLOSE_WAIT_MILLIS} for the calls counted in by {@link #enter()} to finish; true if none runs. */
    private boolean awaitQuiet() {
        return awaitWithinCloseWait(() -> inFlight.get() == 0, 1);
    }

    /** Polls {@code done} every {@code pauseMillis} for up to {@link #CLOSE_WAIT_MILLIS}; true once it holds. */
    private boolean awaitWithinCloseWait(BooleanSupplier done, long pauseMillis) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CLOSE_WAIT_MILLIS);
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            pause(pauseMillis);
        }
        return true;
    }

    /**
     * Flushes every memtable so that the WAL becomes obsolete and the catalog at rest is its tables
     * only. The flush is requested without waiting inside RocksDB (a waiting manual flush can hang
     * there for good, facebook/rocksdb#13280) and awaited here for {@link #CLOSE_WAIT_MILLIS}; if it
     * has not finished, or fails, the WAL is synced instead: it holds everything and is replayed at
     * the next open. No background job is left running: RocksDB's close waits for scheduled ones.
     */
    private void flushBounded() {
        try (FlushOptions flush = new FlushOptions().setWaitForFlush(false).setAllowWriteStall(true)) {
            db.flush(flush, allHandles);
        } catch (RocksDBException e) {
            LOG.log(System.Logger.Level.WARNING, "catalog " + path + ": the flush at close failed (" + e.getMessage()
                    + "); the write-ahead log is synced and is replayed at the next start");
            syncWalQuietly();
            return;
        }
        if (!awaitWithinCloseWait(this::memtablesFlushed, 5)) {
            LOG.log(System.Logger.Level.WARNING, "catalog " + path + ": the flush at close has not finished after "
                    + CLOSE_WAIT_MILLIS / 1000 + " s (a RocksDB manual flush that never completes, see facebook/rocksdb#13280);"
                    + " closing without it: the write-ahead log is synced and is replayed at the next start");
            syncWalQuietly();
        }
    }

    /** True once no column family holds an immutable memtable or a pending flush. */
    private boolean memtablesFlushed() {
        try {
            for (ColumnFamilyHandle h : allHandles) {
                if (!"0".equals(db.getProperty(h, "rocksdb.num-immutable-mem-table"))
                        || !"0".equals(db.getProperty(h, "rocksdb.mem-table-flush-pending"))) {
                    return false;
                }
            }
            return true;
        } catch (RocksDBException e) {
            return true; // nothing to wait for that we could see; the synced WAL covers the rest
        }
    }

    private void syncWalQuietly() {
        try {
            db.syncWal();
        } catch (RocksDBException ignored) {
            // closing anyway; the WAL was written, only the final fsync failed
        }
    }

    private void closeOptions() {
        readOptions.close();
        syncWrite.close();
        asyncWrite.close();
        cfOptions.close();
        plainCfOptions.close();
        bloom.close();
        blockCache.close();
        dbOptions.close();
        infoLog.close();
        health.close();
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static String hex(byte[] key) {
        if (key == null) {
            return null;
        }
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < Math.min(key.length, 48); i++) {
            sb.append(String.format("%02x", key[i]));
        }
        return sb.toString();
    }
}
