package org.holdfast.server.ingest.cluster;

import io.netty.channel.Channel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.holdfast.common.compress.BlockCodec;
import org.holdfast.common.compress.CorruptPayloadException;
import org.holdfast.common.hash.BlockHasher;
import org.holdfast.common.hash.ZeroBlocks;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.Heartbeat;
import org.holdfast.common.protocol.DataFailed;
import org.holdfast.common.protocol.DataRead;
import org.holdfast.common.protocol.DataReadAnswer;
import org.holdfast.common.protocol.DataRepair;
import org.holdfast.common.protocol.Register;
import org.holdfast.common.protocol.DataStoreRequest;
import org.holdfast.common.protocol.DataStored;
import org.holdfast.common.protocol.DataSync;
import org.holdfast.common.protocol.DataSynced;
import org.holdfast.common.protocol.Message;
import org.holdfast.common.protocol.PayloadCodec;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ProtocolException;
import org.holdfast.common.protocol.SealedLogsPush;
import org.holdfast.common.protocol.SealedLogsRecorded;

/**
 * The master's end of one worker's range store (data on workers): sends DATA_STORE, DATA_SYNC and
 * DATA_READ with fresh request ids and completes each call when the worker's answer with that id
 * arrives. A DATA_FAILED answer fails its call with {@link RangeWorkerFailedException} (with the
 * worker's words: nothing of the request was stored); when the link ends, or a call is not
 * answered within the timeout, every pending and later call fails with
 * {@link RangeWorkerLostException}. {@link #answers()} is the pipeline handler that takes the
 * worker's answers; an answer to an id that is not pending is a protocol error (the link closes).
 * Used by ingest and restore through {@link WorkerBlockHome} (holdfast.cluster.data=workers); not yet by GC.
 * DATA_REPAIR goes only on a link of cluster version 6 or newer ({@link #takesRepairs()}).
 */
public final class RemoteRangeStore extends RangeWorkerCalls {
    private static final System.Logger LOG = System.getLogger(RemoteRangeStore.class.getName());
    private volatile RangeDataReport report; // null until a heartbeat of version 3 reports it
    private volatile boolean takesRepairs; // the worker's cluster version is 6 or newer
    private final Channel channel;
    // from cluster version 7: where the worker's sealed-log reports go (null: nowhere); the link's cluster version
    private volatile SealedLogIntake sealedLogs;
    private volatile int clusterVersion;
    // a SEALED_LOGS of this link is being recorded: a worker sends the next only after its acknowledgement
    private final java.util.concurrent.atomic.AtomicBoolean pushRecording = new java.util.concurrent.atomic.AtomicBoolean();
    // the recording of a DATA_SYNCED's report by request id, taken as the answer arrives until the sync's caller looks
    private final java.util.Map<Long, CompletableFuture<Void>> syncReports = new java.util.concurrent.ConcurrentHashMap<>();
    // past every PBN the worker was heard handing out on this link (DATA_STORED answers, heartbeats' next PBN)
    private final java.util.concurrent.atomic.AtomicLong handedOutPast = new java.util.concurrent.atomic.AtomicLong();

    /** Worker {@code name} owning {@code range}, on {@code channel}; a call not answered within {@code timeout} ends the link's use. */
    public RemoteRangeStore(String name, PbnRange range, Channel channel, Duration timeout) {
        super(name, range, channel, timeout);
        this.channel = channel;
    }

    /**
     * Set at registration (cluster version 7): the sealed-log reports of worker {@code id}'s DATA_SYNCED, and
     * from version 8 its SEALED_LOGS, go to {@code recorder}, in the master's {@code order} of the worker's
     * links (this one is its newest now); {@code clusterVersion} is the link's.
     */
    void recordsSealedLogs(long id, SealedLogRecorder recorder, SealedLogOrder order, int clusterVersion) {
        this.clusterVersion = clusterVersion;
        sealedLogs = new SealedLogIntake(id, recorder, order);
    }

    /** What the worker's latest heartbeat said of its range data; null if it said nothing (an older worker) or not yet. */
    public RangeDataReport report() {
        return report;
    }

    /** Keeps the range-data figures of the worker's heartbeat arrived at {@code atMillis}. */
    void reported(Heartbeat.RangeData d, long atMillis) {
        report = RangeDataReport.of(d, range, atMillis);
        if (d.state() == Heartbeat.RangeData.SERVING && range.contains(d.nextPbn() - 1)) {
            handedOutPast.accumulateAndGet(d.nextPbn(), Math::max);
        }
    }

    /**
     * One past the highest PBN the worker was heard handing out on this link (0: none): a node that
     * takes its range over must start above it ({@code pbnFloor} of REGISTERED).
     */
    long handedOutPast() {
        return handedOutPast.get();
    }

    /**
     * Stores {@code count} blocks of {@code blockSize} bytes given as one payload of {@code codec}
     * (raw or zstd: one block; zstd-frame: a frame of {@code count}) with their fingerprints; completes
     * with the first PBN (the blocks are first .. first + count - 1, in order). The worker checks
     * every block against its fingerprint before it stores anything. Not durable before {@link #sync()}.
     */
    public CompletableFuture<Long> store(int codec, int blockSize, int count, byte[] fps, byte[] stored) {
        long id = calls.nextId();
        DataStoreRequest request = new DataStoreRequest(id, codec, blockSize, count, fps, stored);
        return call(id, request).thenApply(m -> {
            DataStored s = (DataStored) m;
            if (s.count() != count || !range.contains(s.first()) || !range.contains(s.first() + count - 1)) {
                throw new RangeWorkerFailedException("worker " + name + " stored " + count + " blocks as PBNs " + s.first() + " .. "
                        + (s.first() + s.count() - 1) + ", which is not its range " + range + " or not the count sent; stop"
                        + " using this worker and check its range-data directory");
            }
            handedOutPast.accumulateAndGet(s.first() + count, Math::max);
            return s.first();
        });
    }

    /**
     * Sends the verified copy {@code stored} (one block, raw or zstd, fingerprint {@code fp}) of bad
     * block {@code pbn} of this worker's range as DATA_REPAIR; completes once the worker appended it as
     * the PBN's new record (durable at the next {@link #sync()}), or found the PBN sound already. Only
     * on a link that {@link #takesRepairs()}.
     */
    public CompletableFuture<Long> repair(long pbn, int codec, int blockSize, byte[] fp, byte[] stored) {
        long id = calls.nextId();
        return call(id, new DataRepair(id, pbn, codec, blockSize, fp, stored)).thenApply(m -> {
            DataStored s = (DataStored) m;
            if (s.first() != pbn || s.count() != 1) {
                throw new RangeWorkerFailedException("worker " + name + " answered the repair of PBN " + pbn + " with PBNs " + s.first()
                        + " .. " + (s.first() + s.count() - 1));
            }
            return pbn;
        });
    }

    /** True if the worker registered at cluster version 6 or newer, so it takes DATA_REPAIR. */
    public boolean takesRepairs() {
        return takesRepairs;
    }

    /** Set at registration from the worker's cluster version ({@link Register#REPAIR_VERSION}). */
    void takesRepairs(boolean yes) {
        takesRepairs = yes;
    }

    /** Makes every block stored so far durable on the worker; completes with its durable point (every stored PBN below it survives a crash). */
    public CompletableFuture<Long> sync() {
        long id = calls.nextId();
        return call(id, new DataSync(id)).thenCompose(m -> {
            DataSynced s = (DataSynced) m;
            CompletableFuture<Void> recorded = syncReports.remove(id);
            if (recorded == null) {
                return CompletableFuture.completedFuture(s.durableBelow());
            }
            // recorded before the sync completes (so before the commit it serves), after the link's earlier reports
            return recorded.handle((v, e) -> {
                if (e != null) {
                    // the worker believes the master heard it: a new link starts again with a full report
                    channel.close();
                    throw new RangeWorkerFailedException("data worker " + name + " (PBNs " + range + ") synced, but the master could"
                            + " not record its sealed logs (" + cause(e).getMessage() + "); the link is closed, the worker reports them"
                            + " all again when it registers: run the backup again");
                }
                return s.durableBelow();
            });
        });
    }

    /**
     * Records the worker's SEALED_LOGS (cluster version 8) as a DATA_SYNCED's report, in arrival order, and
     * acknowledges it; a failure closes the link (the worker's next link starts with a full report). On a
     * link of an older version, or while the link's previous one is not acknowledged yet, the frame is
     * refused BAD_STATE (the link closes), and it is not recorded.
     */
    private void pushed(SealedLogsPush p) {
        SealedLogIntake intake = sealedLogs;
        if (intake == null || clusterVersion < Register.SYNC_REPORT_VERSION) {
            throw new ProtocolException(ErrorCode.BAD_STATE, "SEALED_LOGS on a link registered at cluster version " + clusterVersion
                    + " (it needs " + Register.SYNC_REPORT_VERSION + "); nothing was recorded");
        }
        if (!pushRecording.compareAndSet(false, true)) { // a flood would queue synced catalog writes without bound
            throw new ProtocolException(ErrorCode.BAD_STATE, "SEALED_LOGS " + p.requestId() + " before the previous one was"
                    + " acknowledged (one at a time); it was not recorded");
        }
        intake.record(p.report()).whenComplete((v, e) -> {
            pushRecording.set(false);
            if (e == null) {
                channel.writeAndFlush(new SealedLogsRecorded(p.requestId()));
            } else {
                LOG.log(System.Logger.Level.WARNING, "could not record the sealed logs data worker " + name + " (PBNs " + range
                        + ") reported between syncs (" + cause(e).getMessage() + "); its link is closed, and it reports them all"
                        + " again when it registers");
                channel.close();
            }
        });
    }

    private static Throwable cause(Throwable e) {
        return e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e;
    }

    /** The first blocks of {@code pbns[0..count)} that fit one answer (at least one), as the worker's store reads them. */
    public CompletableFuture<DataReadAnswer> readSome(long[] pbns, int from, int count) {
        long id = calls.nextId();
        long[] asked = Arrays.copyOfRange(pbns, from, from + count);
        return call(id, new DataRead(id, count, asked)).thenApply(m -> {
            DataReadAnswer a = (DataReadAnswer) m;
            if (a.count() > count || !Arrays.equals(a.pbns(), 0, a.count(), asked, 0, a.count())) {
                throw new RangeWorkerFailedException("worker " + name + " answered other blocks than DATA_READ asked for");
            }
            return a;
        });
    }

    /**
     * Reads blocks {@code pbns} (each in this worker's range), as many DATA_READs as they need, and
     * completes with each block's bytes, decoded and checked against the fingerprint the worker's
     * store holds for it (SHA-256; an all-zero block may carry the zero fingerprint).
     */
    public CompletableFuture<List<byte[]>> read(long[] pbns) {
        List<byte[]> blocks = new ArrayList<>(pbns.length);
        return readFrom(pbns, 0, blocks);
    }

    private CompletableFuture<List<byte[]>> readFrom(long[] pbns, int from, List<byte[]> blocks) {
        if (from == pbns.length) {
            return CompletableFuture.completedFuture(blocks);
        }
        int n = Math.min(pbns.length - from, ProtocolLimits.MAX_DATA_READ);
        // decoding and hashing up to 16 MiB is no work for the link's event loop, which completes readSome
        return readSome(pbns, from, n).thenApplyAsync(a -> {
            decode(a, blocks);
            return a.count();
        }).thenCompose(k -> readFrom(pbns, from + k, blocks));
    }

    /** Appends the blocks of {@code a}, decoded and verified, to {@code blocks}. */
    private void decode(DataReadAnswer a, List<byte[]> blocks) {
        byte[] digest = new byte[32];
        byte[] zero = new byte[32];
        try (BlockCodec codec = new BlockCodec()) {
            int off = 0;
            for (int i = 0; i < a.count(); i++) {
                byte[] b = new byte[a.rawLengths()[i]];
                try {
                    codec.decode(a.codecs()[i], a.data(), off, a.storedLengths()[i], b, 0, b.length);
                } catch (CorruptPayloadException e) {
                    throw new RangeWorkerFailedException("worker " + name + " sent PBN " + a.pbns()[i] + " as a " + PayloadCodec.name(a.codecs()[i])
                            + " payload that does not decode (" + e.getMessage() + ")");
                }
                BlockHasher.forCurrentThread().sha256(b, 0, b.length, digest, 0);
                int f = i * 32;
                if (!Arrays.equals(digest, 0, 32, a.fps(), f, f + 32)
                        && !(Arrays.equals(zero, 0, 32, a.fps(), f, f + 32) && ZeroBlocks.isZero(b, 0, b.length))) {
                    throw new RangeWorkerFailedException("worker " + name + " sent PBN " + a.pbns()[i] + " with bytes that do not hash"
                            + " to its fingerprint (SHA-256); the block is not used");
                }
                blocks.add(b);
                off += a.storedLengths()[i];
            }
        }
    }

    private CompletableFuture<Message> call(long id, Message request) {
        return calls.call(id, request);
    }

    @Override
    protected RangeWorkerLostException lostError(String why) {
        return new RangeWorkerLostException("data worker " + name + " (PBNs " + range + ") is lost: " + why + "; what it had not"
                + " answered is not stored or not read; its blocks are unavailable until it registers again (see its log for why)");
    }

    /** Takes this worker's DATA_STORED, DATA_SYNCED, DATA_READ_ANSWER, DATA_FAILED and SEALED_LOGS. */
    @Override
    protected boolean answer(Object msg) {
        if (msg instanceof DataStored s) {
            calls.take(s.requestId(), s).complete(s);
        } else if (msg instanceof DataSynced s) {
            CompletableFuture<Message> call = calls.take(s.requestId(), s);
            SealedLogIntake intake = sealedLogs;
            if (s.sealed() != null && intake != null) {
                // taken as it arrives, before a SEALED_LOGS behind it on the link (incremental on it), not when the
                // sync's caller gets to the answer: that thread may look only after the SEALED_LOGS was taken
                syncReports.put(s.requestId(), intake.record(s.sealed()));
            }
            if (!call.complete(s)) {
                syncReports.remove(s.requestId()); // the call had failed (timed out): nobody looks
            }
        } else if (msg instanceof DataReadAnswer a) {
            calls.take(a.requestId(), a).complete(a);
        } else if (msg instanceof SealedLogsPush p) {
            pushed(p);
        } else if (msg instanceof DataFailed f) {
            DamagedBlockAnswer damaged = DamagedBlockAnswer.parse(f.message());
            // a damaged block is told apart from a refusal: verify marks the one bad, never the other
            calls.take(f.requestId(), f).completeExceptionally(damaged != null
                    ? new RangeBlockDamagedException(name + " (PBNs " + range + ")", damaged)
                    : new RangeWorkerFailedException("data worker " + name + " (PBNs " + range + ") refused a request: " + f.message()));
        } else {
            return false;
        }
        return true;
    }
}
