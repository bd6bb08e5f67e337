package org.holdfast.common.protocol;

/**
 * Why a worker's dedup index was started over at a registration: the one vocabulary for it, carrying
 * the DEDUP_DONE wire code ({@link DedupDone}'s {@code STARTED_OVER_*}), the REST API's name
 * ({@code indexStartedOver.reason}) and the words of the worker's log. The rule that picks one is the
 * server's ({@code engine.IndexOwnerFile}).
 *
 * <p>Why here, in common's protocol package: three sides read it, the decoder that checks a
 * DEDUP_DONE's code (common), the worker's engine that names the reason, and the master's ingest that
 * turns a code back into a name; the engine must not depend on ingest and common cannot see the
 * server, so the protocol package, which all three may use, is the only place one enum serves them all.
 */
public enum StartOverReason {
    /** Registered as a new worker (epoch 1) with an index of an earlier membership on disk. */
    NEW_MEMBERSHIP(DedupDone.STARTED_OVER_NEW_MEMBERSHIP, "new-membership",
            "registered as a new worker (epoch 1): the index on disk is of an earlier membership that the master removed"),
    /** The owner file names another worker id: this host took over another worker (a replacement). */
    OTHER_ID(DedupDone.STARTED_OVER_OTHER_ID, "other-worker-id", "the index was built for another worker id (this host took over a worker)"),
    /**
     * The owner file names this id at an epoch other than the one before: registrations the index did
     * not see (another node held the id meanwhile, or a REGISTERED of this node was cut off before the
     * file was written), or a master whose catalog went back.
     */
    EPOCH_GAP(DedupDone.STARTED_OVER_EPOCH_GAP, "epoch-gap",
            "epoch gap: the index did not see every registration of this worker id (another node held it meanwhile,"
            + " or a registration's connection broke before the index recorded it)"),
    /** The owner file is not an id and an epoch. */
    UNREADABLE_OWNER(DedupDone.STARTED_OVER_UNREADABLE_OWNER, "unreadable-owner-file",
            "the index's owner file <data-dir>/dedup-worker/worker-id does not hold a worker id and an epoch > 0"
            + " (torn, edited or foreign)");

    private final int code;
    private final String apiName;
    private final String words;

    StartOverReason(int code, String apiName, String words) {
        this.code = code;
        this.apiName = apiName;
        this.words = words;
    }

    /** The DEDUP_DONE {@code startOverReason} code (1..4; 0 on the wire means no start-over). */
    public int code() {
        return code;
    }

    /** The name the REST API shows ({@code new-membership}, {@code other-worker-id}, {@code epoch-gap}, {@code unreadable-owner-file}). */
    public String apiName() {
        return apiName;
    }

    /** The reason in a sentence, for the worker's log. */
    public String words() {
        return words;
    }

    /** True if {@code code} is one of the reasons' wire codes. */
    public static boolean isCode(int code) {
        for (StartOverReason r : values()) {
            if (r.code == code) {
                return true;
            }
        }
        return false;
    }

    /** The reason with wire code {@code code}; refuses any other code. */
    public static StartOverReason ofCode(int code) {
        for (StartOverReason r : values()) {
            if (r.code == code) {
                return r;
            }
        }
        throw new IllegalArgumentException("no start-over reason " + code);
    }
}
