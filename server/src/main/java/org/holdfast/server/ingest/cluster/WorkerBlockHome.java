package org.holdfast.server.ingest.cluster;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.holdfast.common.id.Fingerprint;
import org.holdfast.common.protocol.DataReadAnswer;
import org.holdfast.common.protocol.PayloadCodec;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.server.engine.DedupStream;
import org.holdfast.server.store.BadBlocks;
import org.holdfast.server.store.BlockBatch;
import org.holdfast.server.store.BlockHome;
import org.holdfast.server.store.BlocksUnavailableException;
import org.holdfast.server.store.DamagedBlockException;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.RangeCopy;
import org.holdfast.server.store.ReadAhead;
import org.holdfast.server.store.StoredBlock;

/**
 * The blocks live on the workers (data on workers, {@code holdfast.cluster.data=workers}): each
 * verified block or frame goes in one DATA_STORE to the storing worker its lookup named (by worker
 * id, {@link RangeStores#up}) and gets its PBNs from that worker's range, so the PBN lies in the range
 * of the worker whose dedup index records it; that worker not up now (its link or a data call was
 * lost, whatever else registered meanwhile) fails the store, never sends it to another; a session's
 * sync is a DATA_SYNC to every worker it stored on; a read or a fingerprint goes to the worker
 * whose range holds the PBN, in DATA_READs of at most {@value ProtocolLimits#MAX_DATA_READ} PBNs. A session keeps up to {@link #MAX_STORES_IN_FLIGHT} stores in flight
 * ({@link #startAppend}); it lands their PBNs in the order it sent them and syncs only once all landed. A lost or refusing worker fails the call with {@link BlocksUnavailableException}, so the
 * backup stops before its catalog batch and nothing is committed.
 *
 * <p>Fingerprints of a worker's PBNs (the parent comparison of an incremental, a candidate's proof)
 * come from the owner in a DATA_READ, whose answer carries each block's fingerprint beside its
 * bytes: the master holds no fingerprint of a worker's block (its location index and possession
 * records are keyed by PBN and hold none), and a fingerprints-only call would spare the bytes.
 *
 * <p>A block whose record fails its check on its worker ({@link DamagedBlockAnswer}) fails a read
 * with {@link DamagedBlockException} (damaged, which verify marks bad), never with
 * {@link BlocksUnavailableException} (unreachable, which it must not); its fingerprint still comes
 * from the answer, so a backup that meets it sees the block bad and stores a new copy.
 *
 * <p>A PBN whose worker is not connected is read ({@link #readBatch}: restore, verify, the image API)
 * from the master's read-only copy of that worker's range from the bucket ({@link RangeCopies}, with
 * the master's own {@code holdfast.store.s3.*}), if it has one; a PBN it does not hold is unavailable.
 * Such a read waits only for the log of the copy that holds its block, not for the whole range
 * (the agent's connection is kept meanwhile: {@code RestoreStream}'s keep-alives).
 * A backup's fingerprints never come from a copy: a backup must not rely on a block no node serves.
 *
 * <p>A bad block (marked in the master's registry) whose content a backup uploads is repaired in place
 * on the worker that holds it ({@link #repair}: a DATA_REPAIR, on a link of cluster version 6 or newer),
 * made durable by the session's DATA_SYNC to that worker; once the snapshot commit is durable
 * ({@link #committed}) the master clears its marks. A worker that is lost, older or refuses makes
 * {@link #repair} false: the session stores a new copy and the mark stays.
 */
public final class WorkerBlockHome implements BlockHome {
    private static final System.Logger LOG = System.getLogger(WorkerBlockHome.class.getName());
    private final RangeStores stores;
    // null: a lost worker's blocks are unavailable
    private final RangeCopies copies;
    // the master's bad-block registry, whose marks a committed repair clears (null: never cleared)
    private final BadBlocks marks;
    // the PBNs this session repaired on their workers: their marks go once the commit is durable
    private final List<Long> repaired = new ArrayList<>();
    // the workers this session stored on, each link once (identity: a worker that registered again is another link)
    private final List<RemoteRangeStore> storedOn = new ArrayList<>();

    /**
     * DATA_STOREs one session keeps in flight at most. One at a time paces a backup by the round trip
     * plus the worker's check and append of each frame, with the link and the worker idle in between;
     * 8 overlap those with the master's own work. Memory stays bounded: at most 8 copies of a stored
     * frame or block (at most 1 MiB each) per session, and the worker's lane holds at most 64
     * requests or 32 MiB before it pauses the link. The worker serves them in order on one thread,
     * so a session's PBNs still rise in the order it sent its stores.
     */
    public static final int MAX_STORES_IN_FLIGHT = 8;

    // MAX_STORES_IN_FLIGHT but where a measurement compares with one store at a time (no user setting: nobody needs to tune it)
    private final int storesInFlight;

    /** The workers' range stores of {@code stores}; a home for restores and the template of each session's. */
    public WorkerBlockHome(RangeStores stores) {
        this(stores, null);
    }

    /** As {@link #WorkerBlockHome(RangeStores)}, reading a lost worker's blocks from {@code copies} (null: none). */
    public WorkerBlockHome(RangeStores stores, RangeCopies copies) {
        this(stores, copies, null);
    }

    /** As {@link #WorkerBlockHome(RangeStores, RangeCopies)}, clearing the marks in {@code marks} of blocks repaired on their workers. */
    public WorkerBlockHome(RangeStores stores, RangeCopies copies, BadBlocks marks) {
        this(stores, copies, marks, MAX_STORES_IN_FLIGHT);
    }

    /** As above, a session keeping at most {@code storesInFlight} DATA_STOREs in flight (1: the behaviour before the window, for measurements). */
    WorkerBlockHome(RangeStores stores, RangeCopies copies, BadBlocks marks, int storesInFlight) {
        if (storesInFlight < 1) {
            throw new IllegalArgumentException("storesInFlight must be at least 1, not " + storesInFlight);
        }
        this.stores = stores;
        this.copies = copies;
        this.marks = marks;
        this.storesInFlight = storesInFlight;
    }

    @Override
    public BlockHome forSession() {
        return new WorkerBlockHome(stores, copies, marks, storesInFlight);
    }

    @Override
    public boolean keepsBlocksOnWorkers() {
        return true;
    }

    @Override
    public int storesInFlight() {
        return storesInFlight;
    }

    @Override
    public long append(long worker, byte[] fps, int fpOff, byte[] payload, int off, int storedLength, int codec, int rawLength) {
        return join(startAppend(worker, fps, fpOff, payload, off, storedLength, codec, rawLength));
    }

    @Override
    public long appendFrame(long worker, byte[] fps, int fpOff, int members, byte[] frame, int off, int storedLength, int blockSize) {
        return join(startAppendFrame(worker, fps, fpOff, members, frame, off, storedLength, blockSize));
    }

    @Override
    public CompletableFuture<Long> startAppend(long worker, byte[] fps, int fpOff, byte[] payload, int off, int storedLength, int codec,
                                               int rawLength) {
        int wire = codec == FormatVersions.CODEC_ZSTD ? PayloadCodec.ZSTD : PayloadCodec.RAW;
        return store(worker, wire, rawLength, 1, Arrays.copyOfRange(fps, fpOff, fpOff + Fingerprint.BYTES),
                Arrays.copyOfRange(payload, off, off + storedLength));
    }

    @Override
    public CompletableFuture<Long> startAppendFrame(long worker, byte[] fps, int fpOff, int members, byte[] frame, int off, int storedLength,
                                                    int blockSize) {
        return store(worker, PayloadCodec.ZSTD_FRAME, blockSize, members, Arrays.copyOfRange(fps, fpOff, fpOff + members * Fingerprint.BYTES),
                Arrays.copyOfRange(frame, off, off + storedLength));
    }

    /** Sends one DATA_STORE (its own copies of the bytes: the session reuses its buffers while the store is in flight). */
    private CompletableFuture<Long> store(long worker, int wireCodec, int blockSize, int count, byte[] fps, byte[] stored) {
        if (worker == DedupStream.NO_WORKER) {
            throw new BlocksUnavailableException("the dedup engine names no storing worker for a block of this backup, and"
                    + " holdfast.cluster.data=workers keeps every block on a worker: use holdfast.dedup.engine=cluster; nothing of"
                    + " this backup is committed", null);
        }
        RemoteRangeStore s = stores.up(worker);
        if (s == null) {
            RemoteRangeStore gone = stores.registered(worker);
            throw new BlocksUnavailableException("data worker " + (gone == null ? "" : gone.name() + ", ") + "id " + worker
                    + ", the storing worker of a block of this backup, is not up now (holdfast.cluster.data=workers: its link or a"
                    + " data call was lost); the block goes to no other worker, and nothing of this backup is committed: bring the"
                    + " worker back (GET /api/v1/cluster) and run the backup again", null);
        }
        // listed before the answer: a sync after a failed store must not skip the worker that took the ones before it
        if (!storedOnContains(s)) {
            storedOn.add(s);
        }
        return s.store(wireCodec, blockSize, count, fps, stored).handle((first, e) -> {
            if (e != null) {
                throw unavailable(e);
            }
            return first;
        });
    }

    private boolean storedOnContains(RemoteRangeStore s) {
        for (RemoteRangeStore t : storedOn) {
            if (t == s) {
                return true;
            }
        }
        return false;
    }

    /**
     * Sends the verified upload of bad block {@code pbn} to the worker whose range holds it (DATA_REPAIR);
     * true once that worker appended it as the PBN's new copy (or found the PBN sound already), durable
     * at {@link #sync()}. False, nothing changed, if the worker is not connected, speaks a cluster version
     * before 6, or refuses or fails the repair: the caller stores a new copy, and the mark stays.
     */
    @Override
    public boolean repair(long pbn, byte[] fps, int fpOff, byte[] payload, int off, int storedLength, int codec, int rawLength) {
        RemoteRangeStore s = pbn > 0 ? stores.owner(pbn) : null;
        if (s == null || !s.isUp() || !s.takesRepairs()) {
            return false; // an older worker would close its link on DATA_REPAIR
        }
        int wire = codec == FormatVersions.CODEC_ZSTD ? PayloadCodec.ZSTD : PayloadCodec.RAW;
        try {
            s.repair(pbn, wire, rawLength, Arrays.copyOfRange(fps, fpOff, fpOff + Fingerprint.BYTES),
                    Arrays.copyOfRange(payload, off, off + storedLength)).join();
        } catch (CompletionException e) {
            Throwable c = e.getCause() == null ? e : e.getCause();
            LOG.log(System.Logger.Level.WARNING, "bad block PBN {0} not repaired on data worker {1}: {2}; this backup stores a new"
                    + " copy of its content instead, and the mark stays", Long.toString(pbn), s.name(), PendingCalls.reason(c));
            return false;
        }
        if (!storedOnContains(s)) {
            storedOn.add(s);
        }
        repaired.add(pbn);
        return true;
    }

    /** Clears the master's marks of the blocks this session repaired, now that its commit is durable; a failure leaves them marked. */
    @Override
    public void committed() {
        if (marks == null || repaired.isEmpty()) {
            return;
        }
        try {
            marks.clearRepaired(repaired);
        } catch (RuntimeException e) {
            // the blocks are sound on their workers: the next backup of their content repairs "again", which the worker confirms
            LOG.log(System.Logger.Level.WARNING, "could not clear the bad marks of blocks repaired on their workers " + repaired + ": "
                    + e.getMessage());
        }
        repaired.clear();
    }

    /** DATA_SYNC to every worker this session stored on, all at once; fails if any of them is lost or refuses. */
    @Override
    public void sync() {
        List<CompletableFuture<Long>> calls = new ArrayList<>(storedOn.size());
        for (RemoteRangeStore s : storedOn) {
            calls.add(s.sync());
        }
        for (CompletableFuture<Long> c : calls) {
            join(c);
        }
    }

    @Override
    public void fingerprints(long[] pbns, int n, byte[] out, boolean[] found, boolean[] scratch) {
        int i = 0;
        while (i < n) {
            if (pbns[i] <= 0) {
                found[i++] = false;
                continue;
            }
            RemoteRangeStore s = owner(pbns[i]);
            int end = i + 1;
            while (end < n && end - i < ProtocolLimits.MAX_DATA_READ && pbns[end] > 0 && s.range().contains(pbns[end])) {
                end++;
            }
            CompletableFuture<DataReadAnswer> call = s.readSome(pbns, i, end - i);
            DamagedBlockAnswer damaged = damagedFirst(call);
            if (damaged != null) {
                // a damaged record still has the fingerprint its location holds: the session sees the block bad and stores a copy
                found[i] = !isZero(damaged.fingerprint());
                System.arraycopy(damaged.fingerprint(), 0, out, i * Fingerprint.BYTES, Fingerprint.BYTES);
                i++;
                continue;
            }
            DataReadAnswer a = join(call);
            for (int k = 0; k < a.count(); k++) {
                System.arraycopy(a.fps(), k * Fingerprint.BYTES, out, (i + k) * Fingerprint.BYTES, Fingerprint.BYTES);
                found[i + k] = true;
            }
            i += a.count();
        }
    }

    @Override
    public boolean fingerprint(long pbn, StoredBlock scratch) {
        if (pbn <= 0) {
            return false;
        }
        RemoteRangeStore s = owner(pbn);
        CompletableFuture<DataReadAnswer> call = s.readSome(new long[] {pbn}, 0, 1);
        DamagedBlockAnswer damaged = damagedFirst(call);
        if (damaged != null) {
            System.arraycopy(damaged.fingerprint(), 0, scratch.fingerprint(), 0, Fingerprint.BYTES);
            return !isZero(damaged.fingerprint());
        }
        DataReadAnswer a = join(call);
        System.arraycopy(a.fps(), 0, scratch.fingerprint(), 0, Fingerprint.BYTES);
        return true;
    }

    /** Reads the run of {@code pbns[from..)} its first PBN's owner holds, as far as one answer and {@code into} take. */
    @Override
    public int readBatch(long[] pbns, int from, int n, BlockBatch into) {
        into.clear();
        RemoteRangeStore s = live(pbns[from]);
        if (s == null) {
            return lost(pbns[from]).readBatch(pbns, from, n, into);
        }
        int end = from + 1;
        while (end < from + n && end - from < Math.min(ProtocolLimits.MAX_DATA_READ, into.capacity()) && s.range().contains(pbns[end])) {
            end++;
        }
        DataReadAnswer a = joinRead(s, s.readSome(pbns, from, end - from));
        int off = 0;
        for (int k = 0; k < a.count(); k++) {
            int codec = a.codecs()[k] == PayloadCodec.ZSTD ? FormatVersions.CODEC_ZSTD : FormatVersions.CODEC_RAW;
            if (!into.put(a.pbns()[k], a.fps(), k * Fingerprint.BYTES, codec, a.rawLengths()[k], a.data(), off, a.storedLengths()[k])) {
                break; // the rest is asked for again by the next batch
            }
            off += a.storedLengths()[k];
        }
        return into.count();
    }

    @Override
    public String where() {
        return "the data workers' range stores (holdfast.cluster.data=workers)";
    }

    /** No read-ahead: each batch is one DATA_READ to its owner. */
    @Override
    public ReadAhead readAhead() {
        return null;
    }

    /** The connected worker whose range holds {@code pbn} (its bucket copy, if any, dropped), or null if none is. */
    private RemoteRangeStore live(long pbn) {
        RemoteRangeStore s = stores.owner(pbn);
        if (s == null || !s.isUp()) {
            return null;
        }
        if (copies != null) {
            copies.workerUp(pbn);
        }
        return s;
    }

    @Override
    public RangeCopy.Progress copyPending(long pbn) {
        if (copies == null || live(pbn) != null) {
            return null;
        }
        try {
            RangeCopy c = copies.copyFor(pbn);
            return c.readableNow(pbn) ? null : c.progress();
        } catch (BlocksUnavailableException e) {
            return null; // the read fails at once and says why
        }
    }

    /** The bucket copy of the range of {@code pbn}, whose worker is not connected (reads only: a backup never relies on it). */
    private RangeCopy lost(long pbn) {
        if (copies != null) {
            return copies.copyFor(pbn);
        }
        throw notConnected(pbn);
    }

    /** The connected worker whose range holds {@code pbn}, for a backup session: a lost worker's bucket copy is for reads only. */
    private RemoteRangeStore owner(long pbn) {
        RemoteRangeStore s = live(pbn);
        if (s == null) {
            throw notConnected(pbn);
        }
        return s;
    }

    private BlocksUnavailableException notConnected(long pbn) {
        RemoteRangeStore s = stores.owner(pbn);
        return new BlocksUnavailableException("PBN " + pbn + " lives on a data worker that is not connected"
                + (s == null ? "" : " (" + s.name() + ", PBNs " + s.range() + ")") + "; its blocks are unavailable until the"
                + " worker registers again (GET /api/v1/cluster)", null);
    }

    /** The worker's answer that the first PBN {@code call} asked for is damaged, or null (answered, or failed otherwise). */
    private static DamagedBlockAnswer damagedFirst(CompletableFuture<DataReadAnswer> call) {
        try {
            call.join();
            return null;
        } catch (CompletionException e) {
            return e.getCause() instanceof RangeBlockDamagedException d ? d.answer() : null;
        }
    }

    private static boolean isZero(byte[] fingerprint) {
        for (byte b : fingerprint) {
            if (b != 0) {
                return false;
            }
        }
        return true;
    }

    /** As {@link #join}; a worker that found the first PBN asked for damaged fails the read with {@link DamagedBlockException}. */
    private static DataReadAnswer joinRead(RemoteRangeStore s, CompletableFuture<DataReadAnswer> call) {
        try {
            return call.join();
        } catch (CompletionException e) {
            if (e.getCause() instanceof RangeBlockDamagedException d) {
                throw new DamagedBlockException("data worker " + s.name() + " (PBNs " + s.range() + ")", d.answer().pbn(),
                        d.answer().fingerprint(), d.answer().problem());
            }
            return join(call);
        }
    }

    private static <T> T join(CompletableFuture<T> call) {
        try {
            return call.join();
        } catch (CompletionException e) {
            Throwable c = e.getCause() == null ? e : e.getCause();
            throw c instanceof BlocksUnavailableException u ? u : unavailable(c);
        }
    }

    private static BlocksUnavailableException unavailable(Throwable e) {
        Throwable c = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
        return new BlocksUnavailableException(PendingCalls.reason(c) + " (holdfast.cluster.data=workers); nothing of a backup in"
                + " progress is committed, run it again once the worker is back", c);
    }
}
