package org.holdfast.server.store;

import java.util.concurrent.CompletableFuture;

/**
 * Where the blocks of backups live, as a backup session and a restore stream see it: the master's
 * own {@link DataStore} ({@link LocalBlockHome}), or the workers' range stores (data on workers,
 * docs/architecture.md). A session appends each verified block or frame to the storing worker its
 * lookup named and gets its PBN(s), makes its appends durable before the catalog batch, and reads
 * fingerprints of PBNs; a restore, verify and the image API read batches of PBNs. Bad blocks, repairs and the possession
 * index stay the master's (its {@link DataStore}): they are records about PBNs, not the blocks.
 */
public interface BlockHome {
    /**
     * The home one backup session uses: its {@link #sync()} covers what that session appended
     * (on workers: every worker it stored on). A local home is its own.
     */
    default BlockHome forSession() {
        return this;
    }

    /**
     * True if a block lives on the worker that stored it (data on workers): only that worker's index
     * may then learn its PBN. False for a home that keeps every block itself, where any worker's
     * index may record any PBN (a record that has to place again teaches whichever worker it picks).
     */
    default boolean keepsBlocksOnWorkers() {
        return false;
    }

    /**
     * Appends one verified block in its stored form ({@link FormatVersions#CODEC_RAW} or
     * {@link FormatVersions#CODEC_ZSTD}) with fingerprint {@code fps[fpOff..+32)} and returns its PBN.
     * {@code worker} is the storing worker the lookup named, by its stable member id
     * ({@code DedupStream.storingWorkers}; a local home ignores it): a home on workers stores on that
     * worker or fails, never on another. Not durable before {@link #sync()}.
     */
    long append(long worker, byte[] fps, int fpOff, byte[] payload, int off, int storedLength, int codec, int rawLength);

    /** Appends one verified zstd frame of {@code members} blocks as one frame record and returns the first PBN; see {@link #append}. */
    long appendFrame(long worker, byte[] fps, int fpOff, int members, byte[] frame, int off, int storedLength, int blockSize);

    /**
     * How many appends one session may have in flight ({@link #startAppend}, {@link #startAppendFrame}):
     * 1 for a home that answers an append at once (the session then calls {@link #append} and
     * {@link #appendFrame} and waits for each).
     */
    default int storesInFlight() {
        return 1;
    }

    /**
     * Starts {@link #append} without waiting for the PBN: the future completes with it, or fails with
     * what {@link #append} would throw. The caller's arrays may be reused at once. Not durable before
     * {@link #sync()}, which the caller calls only once every future it started completed.
     */
    default CompletableFuture<Long> startAppend(long worker, byte[] fps, int fpOff, byte[] payload, int off, int storedLength, int codec,
                                                int rawLength) {
        return CompletableFuture.completedFuture(append(worker, fps, fpOff, payload, off, storedLength, codec, rawLength));
    }

    /** Starts {@link #appendFrame} without waiting for the first PBN; see {@link #startAppend}. */
    default CompletableFuture<Long> startAppendFrame(long worker, byte[] fps, int fpOff, int members, byte[] frame, int off, int storedLength,
                                                     int blockSize) {
        return CompletableFuture.completedFuture(appendFrame(worker, fps, fpOff, members, frame, off, storedLength, blockSize));
    }

    /** Makes every block appended so far durable; called before the catalog batch that references them. */
    void sync();

    /**
     * Repairs bad block {@code pbn} in place with a verified upload of its content, as
     * {@link DataStore#repair} does: true if the new copy is appended (durable at {@link #sync()}),
     * false if nothing was written (the block is not repairable there, or its worker cannot take the
     * repair now), and the caller stores a new copy instead.
     */
    boolean repair(long pbn, byte[] fps, int fpOff, byte[] payload, int off, int storedLength, int codec, int rawLength);

    /**
     * The session's snapshot is committed (durable): a home whose repairs live elsewhere clears the
     * master's bad marks of the blocks it repaired now. A local home's repairs cleared their marks in {@link #sync()}.
     */
    default void committed() {
    }

    /** Loads the fingerprints of {@code pbns[0..n)} as {@link DataStore#fingerprints} does. */
    void fingerprints(long[] pbns, int n, byte[] out, boolean[] found, boolean[] scratch);

    /** Loads the fingerprint of {@code pbn} into {@code scratch.fingerprint()}; false if the PBN is unknown. */
    boolean fingerprint(long pbn, StoredBlock scratch);

    /**
     * Reads up to {@code n} blocks, {@code pbns[from..from+n)}, as stored into {@code into}, at least one; see {@link DataStore#readBatch}.
     *
     * @throws CorruptDataException       if a record failed its check where it lives (on a worker: {@link DamagedBlockException}
     *                                    for {@code pbns[from]}, the blocks before it having been answered by an earlier call)
     * @throws BlocksUnavailableException if the worker holding {@code pbns[from]} is not connected or the call failed: the
     *                                    block is unreadable now, not damaged
     */
    int readBatch(long[] pbns, int from, int n, BlockBatch into);

    /**
     * The progress of the bucket copy a read of {@code pbn} would wait for now (a lost worker's range
     * still being copied, {@link RangeCopy}), or null if a read of it answers at once. Makes the copy
     * if a read would. A home that keeps its blocks itself never waits so.
     */
    default RangeCopy.Progress copyPending(long pbn) {
        return null;
    }

    /** Where the blocks are, for messages: the store's directory, or the workers'. */
    String where();

    /** A read-ahead for a restore about to read many blocks, or null (see {@link DataStore#readAhead}). */
    ReadAhead readAhead();
}
