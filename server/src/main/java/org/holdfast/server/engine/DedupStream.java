package org.holdfast.server.engine;

/**
 * One backup session's view of the {@link FingerprintIndex}: input segments go through
 * {@link #lookup} and, once their misses are stored, through {@link #record}. Not thread-safe: one
 * stream is driven by one session.
 */
public interface DedupStream extends AutoCloseable {

    /**
     * Looks up one input segment of {@code count} fingerprints packed in {@code fps} (32 bytes each,
     * consecutive LBNs of the stream). Writes into {@code pbns[i]} the PBN of a stored block whose
     * fingerprint equals entry i, or 0 for a miss.
     */
    void lookup(byte[] fps, int count, long[] pbns);

    /**
     * Records the outcome of a segment previously looked up: {@code pbns[i]} is now the PBN of entry
     * i, every one of them durable; {@code isNew[i]} says entry i was stored by this session rather
     * than found as a duplicate.
     */
    void record(byte[] fps, int count, long[] pbns, boolean[] isNew);

    /**
     * As {@link #record(byte[], int, long[], boolean[])}, with {@code storers[i]} the storing worker
     * {@link #storingWorkers} named for entry i at its lookup (where the session stored its block): a
     * cluster stream sends each entry with a PBN to that worker, also when it must look the segment
     * up again (its merge was dropped, or the lookup ran on another stream), and records nowhere an
     * entry whose storing worker is not one of its workers, so no worker's index learns a PBN of
     * another worker's range. A standalone stream ignores {@code storers}.
     */
    default void record(byte[] fps, int count, long[] pbns, boolean[] isNew, long[] storers) {
        record(fps, count, pbns, isNew);
    }

    /** The storing worker of every entry on a stream whose index keeps all blocks on this node (no workers). */
    long NO_WORKER = -1;

    /**
     * Writes into {@code workers[i]}, for each of the {@code count} entries of this stream's last
     * lookup, the worker that stores entry i's block if the session stores it, decided at that lookup
     * and kept until its {@link #record}, which sends the entry to that same worker: for a miss the
     * worker the placement chose; for a resolved entry the worker that resolved it (it holds the
     * container, and stores the copy when the session stores the entry anew after all: the reference
     * guard refused the match, the block is bad, or an unproven candidate's payload differs). A
     * worker is named by its stable id ({@link DedupWorker#memberId()}: the cluster membership's worker
     * id, as the master's range stores are keyed), never by its position in a list of the workers up,
     * which shifts when a lower-id worker drops or registers again between the lookup and the store.
     * {@link #NO_WORKER} for every entry on a stream of a standalone index. Allocates nothing.
     *
     * @throws IllegalStateException on a cluster stream with no completed lookup
     * @throws IllegalArgumentException if {@code count} is not the last lookup's count (cluster streams)
     *     or {@code workers} is shorter
     */
    void storingWorkers(int count, long[] workers);

    @Override
    void close();
}
