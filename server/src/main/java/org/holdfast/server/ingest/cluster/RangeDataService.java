package org.holdfast.server.ingest.cluster;

import io.netty.channel.ChannelHandlerContext;
import java.util.Arrays;
import org.holdfast.common.compress.BlockCodec;
import org.holdfast.common.compress.CorruptPayloadException;
import org.holdfast.common.hash.BlockHasher;
import org.holdfast.common.hash.ZeroBlocks;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.DataFailed;
import org.holdfast.common.protocol.DataRead;
import org.holdfast.common.protocol.DataReadAnswer;
import org.holdfast.common.protocol.DataRepair;
import org.holdfast.common.protocol.DataStoreRequest;
import org.holdfast.common.protocol.DataStored;
import org.holdfast.common.protocol.DataSync;
import org.holdfast.common.protocol.DataSynced;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorLinger;
import org.holdfast.common.protocol.ProtocolException;
import org.holdfast.common.protocol.SealedLogsPush;
import org.holdfast.common.protocol.SealedLogsRecorded;
import org.holdfast.common.protocol.Message;
import org.holdfast.common.protocol.PayloadCodec;
import org.holdfast.server.store.BlockNotStoredException;
import org.holdfast.server.store.CorruptBlockException;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.StorageFullException;
import org.holdfast.server.store.StoredBlock;

/**
 * The worker's end of the data calls on its link to the master (data on workers): stores the blocks
 * the master sends in the worker's own range store ({@link WorkerRangeData}, opened over the range
 * of this registration), makes them durable and reads them back, one request at a time on one
 * thread off the event loop ({@link BoundedLane}: a flood pauses the link's reads, and answers the
 * master does not read hold the next request), answering with the request's id. DATA_REPAIR (cluster
 * version 6) repairs a damaged block in place ({@link RangeBlockRepair}). A worker never stores what it did not
 * check: every block is decoded and its SHA-256 compared with its fingerprint before anything is
 * appended. A refusal (a fingerprint that does not match, a PBN outside the range, a full range, a
 * store that would not open) is answered DATA_FAILED, nothing stored, and the link stays; a
 * malformed frame is answered ERROR and the link closes (after discarding the rest,
 * {@link ErrorLinger}) before the store sees anything. Requests still queued when the link ends are
 * dropped: the master gave them up. Each stored block gets a grace expiry of its own in the range's GC
 * metadata before it is answered ({@link StoredBlockExpiry}), so one whose answer is lost is freed by
 * the range's sweep after the grace.
 */
public final class RangeDataService extends WorkerLinkService {
    private static final System.Logger LOG = System.getLogger(RangeDataService.class.getName());
    private static final byte[] ZERO_FP = new byte[32];
    private final WorkerRangeData data;
    private final PbnRange range;
    private final BoundedLane lane = new BoundedLane("holdfast-range-data");
    // lane thread only
    private final BlockCodec codec = new BlockCodec();
    private final byte[] raw = new byte[FormatVersions.FRAME_MAX_RAW];
    private final byte[] digest = new byte[32];
    private final StoredBlock block = new StoredBlock();
    private final RangeBlockRepair repairs;
    private final StoredBlockExpiry expiry;
    private final SealedLogReporter sealedLogs; // null: DATA_SYNCED carries no report (a link before version 7, or no bucket)
    private final SealedLogPush push; // null: no reports between syncs (a link before version 8, or no bucket)
    private final java.util.concurrent.atomic.AtomicBoolean pushQueued = new java.util.concurrent.atomic.AtomicBoolean();
    private volatile ChannelHandlerContext ctx;

    /** Serves {@code data} over {@code range}, the range of this link's REGISTERED; the store opens on the lane at once. */
    public RangeDataService(WorkerRangeData data, PbnRange range) {
        this(data, range, () -> { });
    }

    /**
     * As above, running {@code first} on the lane before the store opens, so before any block is
     * stored over this link (the worker opens its GC metadata there: created afresh after a block
     * was stored, it would take that block for one stored before its counts were lost).
     */
    public RangeDataService(WorkerRangeData data, PbnRange range, Runnable first) {
        this(data, range, first, null, false);
    }

    /**
     * As above; from cluster version 7 an archiving worker's DATA_SYNCED carries {@code sealedLogs}' report (null: none),
     * and from version 8 it also sends them between syncs ({@code betweenSyncs}, SEALED_LOGS, {@link #heartbeat}).
     */
    RangeDataService(WorkerRangeData data, PbnRange range, Runnable first, SealedLogReporter sealedLogs, boolean betweenSyncs) {
        this(data, range, first, sealedLogs, betweenSyncs, StoredBlockExpiry.NONE);
    }

    /** As above, giving each block stored over this link its own grace expiry through {@code expiry}, opened after {@code first}. */
    RangeDataService(WorkerRangeData data, PbnRange range, Runnable first, SealedLogReporter sealedLogs, boolean betweenSyncs,
                     StoredBlockExpiry expiry) {
        super("data");
        this.expiry = expiry;
        this.sealedLogs = sealedLogs;
        this.push = sealedLogs != null && betweenSyncs ? new SealedLogPush(sealedLogs) : null;
        this.data = data;
        this.range = range;
        this.repairs = new RangeBlockRepair(range);
        lane.run(() -> {
            try {
                first.run();
                expiry.open();
            } catch (RuntimeException e) {
                // whoever owns it reports its own failure (the GC services log a refusal at registration)
            }
            open();
        });
    }

    /** Opens the store before the first request, so a refusal is logged at registration, once per worker process. */
    private void open() {
        try {
            data.claim(range);
        } catch (TakeoverLinkLostException e) {
            LOG.log(System.Logger.Level.WARNING, e.getMessage()); // not kept: the next registration's open runs it again
        } catch (RuntimeException e) {
            if (data.reportRefusal()) {
                LOG.log(System.Logger.Level.ERROR, "cannot open the range store in " + data.dir() + " over PBNs " + range + ": "
                        + e.getMessage() + ". This worker keeps serving the master's dedup calls, but refuses every data call"
                        + " (DATA_FAILED) until that is fixed: a range-data directory belongs to the node that created it; if it was"
                        + " copied here from another node, stop this worker, move " + data.dir() + " away and start it again");
            }
        }
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    /**
     * At each heartbeat (event loop): looks on the lane whether a sealed-log report between syncs is due
     * (cluster version 8, {@link SealedLogPush}) and sends it; at most one look queued at a time.
     */
    void heartbeat() {
        ChannelHandlerContext c = ctx;
        if (push == null || c == null || !pushQueued.compareAndSet(false, true)) {
            return;
        }
        if (!lane.run(() -> {
            pushQueued.set(false);
            pushSealedLogs(c);
        })) {
            pushQueued.set(false);
        }
    }

    private void pushSealedLogs(ChannelHandlerContext c) {
        if (!c.channel().isActive() || ErrorLinger.isLingering(c.channel())) {
            return;
        }
        DataStore store;
        try {
            store = data.claim(range);
        } catch (RuntimeException e) {
            return; // logged once when this link registered (open); nothing is uploaded, so nothing to report
        }
        try {
            SealedLogsPush p = push.next(store);
            if (p != null) {
                c.writeAndFlush(p); // from the lane, so in order with its DATA_SYNCED answers
            }
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "could not report this worker's sealed logs to the master between syncs ("
                    + e.getMessage() + "); the next heartbeat or sync tries again");
        }
    }

    /** The master recorded SEALED_LOGS {@code r}: the next report may go; one never sent is a bad frame. */
    private void recorded(ChannelHandlerContext c, SealedLogsRecorded r) {
        if (push == null) {
            BadMasterFrame.refuse(c, new ProtocolException(ErrorCode.BAD_STATE, "SEALED_LOGS_RECORDED on a link that sends no"
                    + " SEALED_LOGS"), "data");
            return;
        }
        lane.run(() -> {
            if (!push.recorded(r.requestId())) {
                c.executor().execute(() -> BadMasterFrame.refuse(c, new ProtocolException(ErrorCode.BAD_STATE, "SEALED_LOGS_RECORDED "
                        + r.requestId() + " for no report in flight"), "data"));
            }
        });
    }

    static boolean isRequest(Object msg) {
        return msg instanceof DataStoreRequest || msg instanceof DataSync || msg instanceof DataRead || msg instanceof DataRepair;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof SealedLogsRecorded r) {
            recorded(ctx, r);
            return;
        }
        if (!isRequest(msg)) {
            ctx.fireChannelRead(msg);
            return;
        }
        Message m = (Message) msg;
        lane.submit(ctx, requestBytes(m), () -> serve(m));
    }

    /** What a queued request holds in memory, about. */
    private static long requestBytes(Message m) {
        if (m instanceof DataStoreRequest s) {
            return s.stored().length + s.fps().length + 64L;
        } else if (m instanceof DataRepair r) {
            return r.stored().length + 96L;
        } else if (m instanceof DataRead r) {
            return r.count() * 8L + 64;
        }
        return 64;
    }

    /** Most bytes the lane held at once: queued requests and answers not yet written (for tests). */
    long peakQueuedBytes() {
        return lane.peakQueuedBytes();
    }

    private Message serve(Message m) {
        long id = requestId(m);
        DataStore store;
        try {
            store = data.claim(range);
        } catch (RuntimeException e) { // logged once when this link registered (open)
            return DataFailed.of(id, m.type() + " failed on the worker: " + e.getMessage());
        }
        try {
            if (m instanceof DataStoreRequest s) {
                return store(store, s);
            } else if (m instanceof DataRepair r) { // the upload checked as a DATA_STORE's, then RangeBlockRepair's own checks
                String bad = verify(new DataStoreRequest(r.requestId(), r.codec(), r.blockSize(), 1, r.fp(), r.stored()));
                return bad != null ? DataFailed.of(r.requestId(), "DATA_REPAIR refused: " + bad + "; nothing changed")
                        : repairs.repair(store, r, codec);
            } else if (m instanceof DataSync) {
                expiry.beforeSync();
                data.sync(store); // with an object store: also every sealed log in the bucket
                return new DataSynced(id, store.nextPbn(), sealedLogs == null ? null : sealedLogs.next(store));
            }
            return read(store, (DataRead) m);
        } catch (StorageFullException e) {
            // the store's own advice (delete snapshots, reclaim-now) frees nothing here: no GC sweeps range data yet
            String why = m.type() + " failed on the worker: its range-data disk (" + data.dir() + ") is full ("
                    + (e.freeBytes() < 0 ? "no space left" : mib(e.freeBytes()) + " free, the reserve"
                    + " holdfast.store.min-free-space is " + mib(e.reserveBytes())) + "); nothing was stored."
                    + " Grow that disk or move the worker's data directory to a larger one";
            LOG.log(System.Logger.Level.WARNING, why);
            return DataFailed.of(id, why);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "data request " + m.type() + " failed: " + e.getMessage());
            return DataFailed.of(id, m.type() + " failed on the worker: " + e.getMessage());
        }
    }

    /** Checks every block of {@code s} against its fingerprint, then appends them as they came. */
    private Message store(DataStore store, DataStoreRequest s) {
        String bad = verify(s);
        if (bad != null) {
            return DataFailed.of(s.requestId(), "DATA_STORE refused: " + bad + "; nothing of it was stored");
        }
        byte[] p = s.stored();
        long first = s.codec() == PayloadCodec.ZSTD_FRAME
                ? store.appendFrame(s.fps(), 0, s.count(), p, 0, p.length, s.blockSize())
                : store.append(s.fps(), 0, p, 0, p.length, s.codec() == PayloadCodec.ZSTD ? FormatVersions.CODEC_ZSTD
                        : FormatVersions.CODEC_RAW, s.blockSize());
        expiry.stored(first, s.count()); // before the answer: one the link loses leaves a block the sweep frees after the grace
        return new DataStored(s.requestId(), first, s.count());
    }

    /** Why {@code s}'s blocks are not what its fingerprints say, or null: each decoded and hashed (SHA-256). */
    private String verify(DataStoreRequest s) {
        int bs = s.blockSize();
        try {
            if (s.codec() == PayloadCodec.RAW) {
                System.arraycopy(s.stored(), 0, raw, 0, bs);
            } else {
                codec.decompress(s.stored(), 0, s.stored().length, raw, 0, s.count() * bs);
            }
        } catch (CorruptPayloadException e) {
            return "the " + PayloadCodec.name(s.codec()) + " payload does not decode to " + s.count() + " blocks of " + bs + " bytes ("
                    + e.getMessage() + ")";
        }
        BlockHasher h = BlockHasher.forCurrentThread();
        for (int k = 0; k < s.count(); k++) {
            h.sha256(raw, k * bs, bs, digest, 0);
            // an all-zero member may carry the zero fingerprint, as the store's own read accepts
            if (!Arrays.equals(digest, 0, 32, s.fps(), k * 32, k * 32 + 32)
                    && !(Arrays.equals(ZERO_FP, 0, 32, s.fps(), k * 32, k * 32 + 32) && ZeroBlocks.isZero(raw, k * bs, bs))) {
                return "block " + k + " of " + s.count() + " does not hash to its fingerprint (SHA-256)";
            }
        }
        return null;
    }

    /** The first blocks {@code r} asks for that fit one frame (at least one), as the store reads them. */
    private Message read(DataStore store, DataRead r) {
        for (long p : r.pbns()) {
            if (!range.contains(p)) {
                return DataFailed.of(r.requestId(), "DATA_READ refused: PBN " + p + " is outside this worker's range " + range
                        + "; ask the worker that owns it; nothing was read");
            }
        }
        long[] pbns = new long[r.count()];
        byte[] fps = new byte[r.count() * 32];
        byte[] codecs = new byte[r.count()];
        int[] rawLengths = new int[r.count()];
        int[] storedLengths = new int[r.count()];
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        int n = 0;
        while (n < r.count()) {
            try {
                store.read(r.pbns()[n], block);
            } catch (CorruptBlockException e) {
                if (n > 0) {
                    break; // the blocks before it are answered; the master asks for this one again and learns it is damaged
                }
                // its record failed its check here (the store marked it bad): the master's verify must tell this from a lost link
                LOG.log(System.Logger.Level.WARNING, "DATA_READ: " + e.getMessage());
                // what the check found and where, not the store's advice (a repair on a worker is not the master's to promise)
                return DataFailed.of(r.requestId(), DamagedBlockAnswer.message(r.pbns()[n], block.fingerprint(),
                        e.problem() + " (" + e.file() + ", record at offset " + e.offset() + ")"));
            } catch (BlockNotStoredException e) {
                if (n > 0) {
                    break; // as for a damaged record: the master asks for this one alone
                }
                if (r.pbns()[n] >= store.nextPbn()) {
                    throw e; // never handed out here: a failed call, not damage
                }
                // handed out here, then freed (a catalog restored from a backup older than the release) or lost: the
                // master's verify marks it bad and flags the snapshots that reference it, rather than skipping them
                return DataFailed.of(r.requestId(), DamagedBlockAnswer.message(r.pbns()[n], null, DamagedBlockAnswer.NOT_HELD));
            }
            if (n > 0 && !DataReadAnswer.fits(n + 1, (long) out.size() + block.storedLength())) {
                break;
            }
            pbns[n] = r.pbns()[n];
            System.arraycopy(block.fingerprint(), 0, fps, n * 32, 32);
            codecs[n] = (byte) (block.codec() == FormatVersions.CODEC_ZSTD ? PayloadCodec.ZSTD : PayloadCodec.RAW);
            rawLengths[n] = block.rawLength();
            storedLengths[n] = block.storedLength();
            out.write(block.data(), block.dataOffset(), block.storedLength());
            n++;
        }
        return new DataReadAnswer(r.requestId(), n, Arrays.copyOf(pbns, n), Arrays.copyOf(fps, n * 32), Arrays.copyOf(codecs, n),
                Arrays.copyOf(rawLengths, n), Arrays.copyOf(storedLengths, n), out.toByteArray());
    }

    private static String mib(long bytes) {
        return String.format(java.util.Locale.ROOT, "%.1f MiB", bytes / (double) (1L << 20));
    }

    private static long requestId(Message m) {
        if (m instanceof DataStoreRequest s) {
            return s.requestId();
        } else if (m instanceof DataSync s) {
            return s.requestId();
        } else if (m instanceof DataRepair r) {
            return r.requestId();
        }
        return ((DataRead) m).requestId();
    }

    @Override
    void linkEnded() {
        expiry.linkEnded(); // after the channel went inactive: a store served from now on cannot be answered
        lane.run(codec::close); // false: already stopping
        lane.shutdown();
    }
}
