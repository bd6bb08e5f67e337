package org.holdfast.server.engine;

/**
 * Why a worker's dedup index was started over at a registration ({@link LazyDedupWorker#claim}), with
 * the words its log uses; the rule is {@link IndexOwnerFile}'s.
 */
public enum StartOverReason {
    /** Registered as a new worker (epoch 1) with an index of an earlier membership on disk. */
    NEW_MEMBERSHIP("registered as a new worker (epoch 1): the index on disk is of an earlier membership that the master removed"),
    /** The owner file names another worker id: this host took over another worker (a replacement). */
    OTHER_ID("the index was built for another worker id (this host took over a worker)"),
    /**
     * The owner file names this id at an epoch other than the one before: registrations the index did
     * not see (another node held the id meanwhile, or a REGISTERED of this node was cut off before the
     * file was written), or a master whose catalog went back.
     */
    EPOCH_GAP("epoch gap: the index did not see every registration of this worker id (another node held it meanwhile,"
            + " or a registration's connection broke before the index recorded it)"),
    /** The owner file is not an id and an epoch. */
    UNREADABLE_OWNER("the index's owner file <data-dir>/dedup-worker/worker-id does not hold a worker id and an epoch > 0"
            + " (torn, edited or foreign)");

    private final String words;

    StartOverReason(String words) {
        this.words = words;
    }

    /** The reason in a sentence, for the worker's log. */
    public String words() {
        return words;
    }
}
