package org.holdfast.server.ingest;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.holdfast.common.compress.BlockCodec;
import org.holdfast.common.protocol.PayloadCodec;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.common.protocol.RestoreData;
import org.holdfast.common.protocol.RestoreEnd;
import org.holdfast.common.protocol.RestoreInfo;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.MapCursor;
import org.holdfast.server.catalog.SnapshotRecord;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.store.BlockBatch;
import org.holdfast.server.store.CorruptBlockException;
import org.holdfast.server.store.BlockHome;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.VerifyLedger;

/**
 * Streams one snapshot to an agent: RESTORE_INFO, RESTORE_DATA frames in LBN order, RESTORE_END.
 *
 * <p>One ordered scan of the versioned map ({@link MapCursor#nextMapped()}) yields each LBN's
 * newest entry not newer than the snapshot; LBNs without one are zero blocks (codec 0). Stored
 * bytes go out exactly as stored (zstd stays zstd), each with its fingerprint so the agent can
 * verify it. A block stored in a compressed frame goes out as that frame, once per message, and
 * every further block of the same frame in the message refers to it: the server never decodes a
 * frame for an agent that speaks protocol 4. For an older agent it decodes the frame and sends
 * the block raw. The map iterator pins a consistent view for the whole restore.
 *
 * <p>Reads go in batches: the next {@value #LOOKAHEAD} mapped LBNs are taken from the map, and
 * their blocks are read with {@link BlockHome#readBatch} (one index iterator, one positional read
 * per stretch of adjacent records), so a restore of a sequentially written volume costs a few
 * system calls per frame instead of one read and one index lookup per block. On backend s3 a
 * {@link RestorePrefetcher} announces the blocks further ahead, so that their ranges are fetched
 * from the object store on other threads before this stream reads them.
 *
 * <p>Flow control: at most {@value #MAX_IN_FLIGHT} frames are written and not yet flushed to the
 * socket, and none is built while the channel is not writable; each completed write schedules the
 * next {@link #pump()}. So a slow agent never makes the server buffer more than two frames.
 * {@link #pump()} and {@link #close()} run on the connection's serial lane only.
 *
 * <p>Keep-alive: while a frame takes longer than {@link #keepAlive} to build (a read that waits, as on a
 * lost worker's range being copied from the bucket), an empty RESTORE_DATA at the LBN the agent expects
 * goes out each period (0 entries are valid since protocol 1), so neither the agent's frame timeout nor
 * the server's idle timeout ends a restore the server is working on. It is queued on the event loop
 * under the same lock as the frames, so it never overtakes RESTORE_INFO or a frame.
 */
public final class RestoreStream implements AutoCloseable {
    static final int MAX_IN_FLIGHT = 2;
    static final int LOOKAHEAD = ProtocolLimits.MAX_BLOCKS_PER_FRAME;
    private static final int BATCH_BUFFER_BYTES = 4 << 20;
    /**
     * Payload bytes per RESTORE_DATA frame (unless one block is bigger). Well below the protocol's
     * limit so every frame buffer comes from Netty's pool at its final size: a frame that grows, or
     * one above the pool's 4 MiB chunks, costs a reallocation or a fresh zeroed direct buffer.
     */
    static final int FRAME_PAYLOAD_BYTES = 1 << 20;

    private final BlockHome store;
    private final SnapshotRecord snapshot;
    private final String volumeName;
    private final long volumeInternalId;
    private final Catalog catalog;
    private final Channel channel;
    private final Executor lane;
    private final Consumer<Throwable> onError;
    private final Runnable onEnd;
    private final MapCursor cursor;
    // backend s3: fetches the ranges of the blocks ahead on other threads; null without
    private final RestorePrefetcher prefetcher;
    private final BlockBatch batch;
    private final long blockCount;
    private final int framePayloadBytes;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final SentFrames framesInMessage = new SentFrames();
    private boolean framesOnWire;
    // for an agent before protocol 4 only: frame members are decoded here and sent raw
    private BlockCodec decoder;
    private byte[] plain;
    private java.util.function.LongConsumer sent = n -> { };
    private long nextLbn;
    // look-ahead: mapped, non-zero entries [head, ahead) in LBN order; batch holds [batchStart, batchEnd)
    private final long[] aheadLbn = new long[LOOKAHEAD];
    private final long[] aheadPbn = new long[LOOKAHEAD];
    private int head;
    private int ahead;
    private int batchStart;
    private int batchEnd;
    private boolean cursorDone;
    private long blocksSent;
    private boolean done;
    private boolean closed;
    // keep-alive: guarded by wire; frames and keep-alives are queued on the event loop under it, in order
    private final Object wire = new Object();
    private boolean started;
    private boolean building;
    private long frameStart;
    private long lastWriteNanos = System.nanoTime();
    private long keepAliveNanos;
    private java.util.concurrent.ScheduledFuture<?> keepAlives;

    /** A restore of blocks held in {@code store} (standalone). */
    public RestoreStream(Catalog catalog, org.holdfast.server.store.DataStore store, VolumeRecord volume, SnapshotRecord snapshot,
                         long fromLbn, Channel channel, Executor lane, Consumer<Throwable> onError, Runnable onEnd) {
        this(catalog, new org.holdfast.server.store.LocalBlockHome(store), volume, snapshot, fromLbn, channel, lane, onError, onEnd);
    }

    /**
     * @param fromLbn first LBN to send; at most the snapshot's block count
     * @param onError called on the lane when a pump fails (the caller sends ERROR and closes)
     * @param onEnd   called on the lane after RESTORE_END was written
     */
    public RestoreStream(Catalog catalog, BlockHome store, VolumeRecord volume, SnapshotRecord snapshot, long fromLbn,
                         Channel channel, Executor lane, Consumer<Throwable> onError, Runnable onEnd) {
        this.store = store;
        this.snapshot = snapshot;
        this.volumeName = volume.name().name();
        this.volumeInternalId = volume.internalId();
        this.catalog = catalog;
        this.channel = channel;
        this.lane = lane;
        this.onError = onError;
        this.onEnd = onEnd;
        this.blockCount = snapshot.blockCount();
        if (fromLbn < 0 || fromLbn > blockCount) {
            throw new IllegalArgumentException("fromLbn " + fromLbn + " is past the end of snapshot " + snapshot.sequence()
                    + " (" + blockCount + " blocks)");
        }
        this.nextLbn = fromLbn;
        this.framePayloadBytes = Math.max(FRAME_PAYLOAD_BYTES, ProtocolLimits.maxZstdPayload(snapshot.blockSize()));
        this.batch = new BlockBatch(LOOKAHEAD, BATCH_BUFFER_BYTES, ProtocolLimits.maxZstdPayload(snapshot.blockSize()));
        this.cursor = catalog.mapCursor(volume.internalId());
        try {
            cursor.startScan(snapshot.sequence(), fromLbn, blockCount);
            this.prefetcher = RestorePrefetcher.start(store.readAhead(), catalog, volume.internalId(), snapshot.sequence(), fromLbn, blockCount);
        } catch (RuntimeException | Error e) {
            cursor.close(); // its catalog iterator would otherwise hold the catalog's close for its full wait
            throw e;
        }
    }

    /** The RESTORE_INFO to send first. */
    public RestoreInfo info() {
        return new RestoreInfo(snapshot.sequence(), snapshot.volumeBytes(), snapshot.blockSize(), blockCount);
    }

    /** Lets stored frames go out as they are (the agent negotiated protocol 4 or later); else they are decoded here. */
    public RestoreStream framesOnWire(boolean on) {
        this.framesOnWire = on;
        return this;
    }

    /** Tells {@code c} the logical bytes (blocks × block size) of each frame written, for transfer rates. Lane only. */
    public RestoreStream onSent(java.util.function.LongConsumer c) {
        this.sent = c;
        return this;
    }

    /** The keep-alive period for a server idle timeout of {@code idleTimeout}: half of it, at most a minute (the agent waits 10). */
    public static java.time.Duration keepAliveEvery(java.time.Duration idleTimeout) {
        java.time.Duration half = idleTimeout.dividedBy(2);
        return half.compareTo(java.time.Duration.ofMinutes(1)) < 0 ? half : java.time.Duration.ofMinutes(1);
    }

    /** Sends an empty RESTORE_DATA every {@code every} while a frame takes longer than that to build (see the class comment). */
    public RestoreStream keepAlive(java.time.Duration every) {
        long nanos = Math.max(every.toNanos(), java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(10));
        keepAliveNanos = nanos;
        keepAlives = channel.eventLoop().scheduleAtFixedRate(this::keepAliveNow, nanos, nanos, java.util.concurrent.TimeUnit.NANOSECONDS);
        return this;
    }

    /** Writes RESTORE_INFO, then frames as far as the channel takes them. Lane. */
    public void start() {
        synchronized (wire) {
            channel.writeAndFlush(info());
            started = true;
            lastWriteNanos = System.nanoTime();
        }
        pump();
    }

    /** Event loop: an empty RESTORE_DATA if a frame has been building for a keep-alive period and nothing went out since. */
    private void keepAliveNow() {
        synchronized (wire) {
            long now = System.nanoTime();
            if (!started || !building || now - lastWriteNanos < keepAliveNanos || !channel.isActive()) {
                return;
            }
            lastWriteNanos = now;
            long at = frameStart;
            // queued, not written here: a frame the lane queued before stays ahead of it
            channel.eventLoop().execute(() -> channel.writeAndFlush(RestoreData.builder(channel.alloc(), at, 0).build()));
        }
    }

    /** Writes frames while the channel takes them; call again when it becomes writable. */
    public void pump() {
        while (!done && !closed && channel.isActive() && channel.isWritable() && inFlight.get() < MAX_IN_FLIGHT) {
            if (nextLbn >= blockCount) {
                done = true;
                channel.writeAndFlush(new RestoreEnd(blocksSent));
                close();
                onEnd.run();
                return;
            }
            long before = blocksSent;
            synchronized (wire) {
                frameStart = nextLbn;
                building = true;
            }
            RestoreData frame;
            try {
                frame = buildFrame();
            } finally {
                synchronized (wire) {
                    building = false;
                }
            }
            if (prefetcher != null) {
                prefetcher.reached(nextLbn);
            }
            sent.accept((blocksSent - before) * snapshot.blockSize());
            inFlight.incrementAndGet();
            ChannelFuture f;
            synchronized (wire) {
                lastWriteNanos = System.nanoTime();
                f = channel.writeAndFlush(frame);
            }
            f.addListener(written -> {
                inFlight.decrementAndGet();
                if (written.isSuccess()) {
                    lane.execute(this::pumpSafely);
                } else {
                    lane.execute(this::close);
                }
            });
        }
    }

    private void pumpSafely() {
        try {
            pump();
        } catch (RuntimeException e) {
            close();
            onError.accept(e);
        }
    }

    private RestoreData buildFrame() {
        RestoreData.Builder b = RestoreData.builder(channel.alloc(), nextLbn, framePayloadBytes);
        framesInMessage.clear();
        try {
            while (nextLbn < blockCount && b.count() < ProtocolLimits.MAX_BLOCKS_PER_FRAME) {
                if (head == ahead && !cursorDone) {
                    lookAhead();
                }
                if (head < ahead && aheadLbn[head] == nextLbn) {
                    if (head >= batchEnd) {
                        batchStart = head;
                        batchEnd = head + readBatch();
                    }
                    int i = head - batchStart;
                    if (!addStored(b, i)) {
                        break; // the first block of the next frame
                    }
                    head++;
                } else {
                    b.addZero();
                }
                nextLbn++;
                blocksSent++;
            }
            return b.build();
        } catch (RuntimeException e) {
            b.close();
            throw e;
        }
    }

    /** Adds batch block {@code i} to the message; false if it does not fit (it then starts the next one). */
    private boolean addStored(RestoreData.Builder b, int i) {
        byte[] fps = batch.fingerprints();
        int fpOff = batch.fingerprintOffset(i);
        if (batch.codec(i) != FormatVersions.CODEC_FRAME) {
            int len = batch.storedLength(i);
            if (!fits(b, len)) {
                return false;
            }
            b.add(batch.codec(i), fps, fpOff, batch.data(), batch.dataOffset(i), len);
            return true;
        }
        if (!framesOnWire) {
            int blockSize = snapshot.blockSize();
            if (!fits(b, blockSize)) {
                return false;
            }
            if (decoder == null) {
                decoder = new BlockCodec();
                plain = new byte[blockSize];
            }
            batch.decode(i, decoder, plain, 0);
            b.add(PayloadCodec.RAW, fps, fpOff, plain, 0, blockSize);
            return true;
        }
        int ordinal = framesInMessage.find(batch.frameLogId(i), batch.frameOffset(i));
        if (ordinal >= 0) {
            if (!b.fits(0)) {
                return false;
            }
            b.addFrameMember(fps, fpOff, batch.memberIndex(i), ordinal);
            return true;
        }
        int len = batch.storedLength(i);
        if (!fits(b, len)) {
            return false;
        }
        ordinal = b.addFrame(fps, fpOff, batch.memberIndex(i), batch.frameMembers(i), batch.data(), batch.dataOffset(i), len);
        framesInMessage.add(batch.frameLogId(i), batch.frameOffset(i), ordinal);
        return true;
    }

    private boolean fits(RestoreData.Builder b, int len) {
        return b.fits(len) && b.payloadBytes() + len <= framePayloadBytes;
    }

    /** Reads the look-ahead's blocks from {@code head}; a damaged one is reported with this snapshot and its LBN. */
    private int readBatch() {
        try {
            return store.readBatch(aheadPbn, head, ahead - head, batch);
        } catch (CorruptBlockException e) {
            Long lbn = null;
            for (int i = head; i < ahead; i++) {
                if (aheadPbn[i] == e.pbn()) {
                    lbn = aheadLbn[i];
                    break;
                }
            }
            if (lbn != null) {
                try {
                    // flags the volume and snapshot at once, without waiting for a verify pass
                    new VerifyLedger(catalog.db()).addDamage(volumeInternalId, snapshot.sequence(), lbn, e.pbn());
                } catch (RuntimeException ignored) {
                    // the restore's own failure below is what matters; the next verify records the damage
                }
            }
            throw e.in(volumeName, snapshot.sequence(), lbn);
        }
    }

    /** Refills the look-ahead with the next mapped LBNs (an entry mapped to PBN 0 is a zero block: left out). */
    private void lookAhead() {
        head = 0;
        ahead = 0;
        batchStart = 0;
        batchEnd = 0;
        while (ahead < LOOKAHEAD) {
            if (!cursor.nextMapped()) {
                cursorDone = true;
                break;
            }
            if (cursor.pbn() != 0) {
                aheadLbn[ahead] = cursor.lbn();
                aheadPbn[ahead] = cursor.pbn();
                ahead++;
            }
        }
        if (prefetcher != null && ahead > 0) {
            prefetcher.reached(aheadLbn[ahead - 1] + 1); // read now: what read-ahead fetches counts from after these
        }
    }

    public boolean isDone() {
        return done;
    }

    /** Releases the map iterator. Idempotent. */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            if (keepAlives != null) {
                keepAlives.cancel(false);
            }
            if (prefetcher != null) {
                prefetcher.close();
            }
            cursor.close();
            if (decoder != null) {
                decoder.close();
            }
        }
    }
}
