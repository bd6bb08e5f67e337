package org.holdfast.server.ingest.cluster;

/**
 * What the master keeps about blocks of a worker's range that must go once that worker's sweep freed
 * them: their possession entries, which would otherwise let a stale engine answer resolve as a proven
 * duplicate. Called with the PBNs of each stale-marks part, already checked to lie in the sender's range.
 */
@FunctionalInterface
public interface FreedBlockRecords {
    /** Keeps nothing (a master without a data store of its own: tests of the links alone). */
    FreedBlockRecords NONE = (pbns, count) -> { };

    /** Forgets the records of {@code pbns[0..count)}, durably, before returning. */
    void forget(long[] pbns, int count);
}
