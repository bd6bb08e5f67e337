package org.holdfast.server.store;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.OptionalLong;
import java.util.Set;
import org.holdfast.server.store.object.ObjectStore;

/**
 * A takeover's check of the logs it adopts against the master's records of the worker's sealed logs
 * ({@link SealedLogs}), as a {@link RangeCopy} checks what it reads, so that a takeover never adopts a
 * cut or altered log (its first report would then record those bytes as what the worker sealed).
 * Before the claim, from the listing and one size request per recorded log: a recorded log of another
 * size refuses the takeover with nothing claimed or written (one missing is logged: the worker may
 * have freed and deleted it after its last report); then, unless turned off, one read of every recorded
 * log through SHA-256 ({@link TakeoverDigestCheck}): a log altered at its sealed size refuses the same
 * way, while the old worker is not fenced yet; a worker's key that appeared or went during that read
 * (another node of the worker writing) refuses too. While
 * adopting, each downloaded log's SHA-256 again ({@link RangeTakeover#adopt(RangeTakeover.Plan, java.nio.file.Path,
 * MetadataDb, org.holdfast.common.id.PbnRange, ObjectStore, java.nio.file.Path, SealedLogs)}): a mismatch
 * refuses before the store is made. Logs without a record are adopted unchecked and logged.
 */
public final class TakeoverCheck {
    private static final System.Logger LOG = System.getLogger(TakeoverCheck.class.getName());
    private static final String STORE = "range-takeover";
    private static final String NOTHING_CLAIMED = "nothing was claimed or written in the bucket";

    private TakeoverCheck() {
    }

    /**
     * The takeover plan of worker {@code worker}'s range from one listing of the bucket, checked against
     * {@code records}: per log id the recorded log (a newer copy the worker never reported is left in the
     * bucket, unread); {@link SealedLogs#NONE} plans as {@link RangeTakeover#plan(long, ObjectStore)} does.
     * Sizes only, as a resume needs (its epoch is claimed already; the adoption reads every SHA-256).
     *
     * @throws CorruptDataException a recorded log's object is not the recorded size
     */
    public static RangeTakeover.Plan plan(long worker, ObjectStore objects, SealedLogs records) {
        return plan(worker, objects, records, false, false);
    }

    /**
     * As {@link #plan(long, ObjectStore, SealedLogs)}; {@code sha256}: also reads every recorded log to
     * be adopted through SHA-256 before returning, so that the claim comes only after its content matched.
     *
     * @throws CorruptDataException a recorded log's object is not the recorded size, or (with {@code sha256}) not its SHA-256
     */
    public static RangeTakeover.Plan plan(long worker, ObjectStore objects, SealedLogs records, boolean sha256) {
        return plan(worker, objects, records, sha256, !sha256);
    }

    /** {@code warnSizeOnly}: a takeover configured to check sizes only before its claim logs the risk (a resume has claimed already). */
    private static RangeTakeover.Plan plan(long worker, ObjectStore objects, SealedLogs records, boolean sha256, boolean warnSizeOnly) {
        List<String> listing = objects.list(WorkerKeys.prefix(worker));
        RangeTakeover.Plan planned = RangeTakeover.plan(worker, listing, key -> RangeTakeover.readMarker(objects, key));
        if (planned.epoch() == 1) {
            return planned;
        }
        if (!records.recorded()) {
            LOG.log(System.Logger.Level.WARNING, "takeover of worker " + worker + "'s range: the master holds no record of the"
                    + " worker's sealed logs (a worker of an older release), or none was asked: the " + planned.adopted().size()
                    + " logs in the bucket are adopted as listed, unchecked");
            return planned;
        }
        List<String> lost = new ArrayList<>();
        List<String> unchecked = new ArrayList<>();
        List<String> adopted = records.toRead(worker, planned.adopted(), listing, lost::add, unchecked::add, true);
        for (String l : lost) {
            // not refused: a log the worker freed whole and deleted after its last report is gone as well
            LOG.log(System.Logger.Level.ERROR, "takeover of worker " + worker + "'s range: " + l + " (if the worker did not delete"
                    + " it itself, put it back and verify)");
        }
        List<String> recorded = new ArrayList<>();
        for (String key : adopted) {
            OptionalLong size = objects.size(key);
            String why = records.mismatch(key, size.orElse(-1), null);
            if (size.isEmpty()) {
                why = "log " + key + " was deleted from the bucket during the takeover's check";
            }
            if (why != null) {
                throw refusal(worker, why, NOTHING_CLAIMED);
            }
            if (records.recordedSize(key) >= 0) {
                recorded.add(key);
            }
        }
        if (sha256) {
            String why = TakeoverDigestCheck.check(worker, planned.epoch(), recorded, objects, records);
            if (why != null) {
                throw refusal(worker, why, NOTHING_CLAIMED);
            }
            unchangedSince(worker, listing, objects);
        } else if (warnSizeOnly && !recorded.isEmpty()) {
            LOG.log(System.Logger.Level.WARNING, "takeover of worker " + worker + "'s range: the " + recorded.size() + " recorded logs"
                    + " were checked by size only before the claim (holdfast.cluster.takeover-check=size): one altered at its sealed size"
                    + " is found only after epoch " + planned.epoch() + " is claimed, when the old worker can no longer write");
        }
        for (String u : unchecked) {
            LOG.log(System.Logger.Level.WARNING, "takeover of worker " + worker + "'s range: " + u);
        }
        return new RangeTakeover.Plan(worker, planned.epoch(), adopted);
    }

    /**
     * Refuses the takeover if the worker's keys changed since {@code listing}: the read can take hours,
     * and a node of the worker that wrote meanwhile (the old one, registered again while this node's
     * link was down) is alive; claiming now would fence it and delete its uploads as late ones, blocks
     * of commits the master took as durable among them.
     */
    private static void unchangedSince(long worker, List<String> listing, ObjectStore objects) {
        Set<String> before = new HashSet<>(listing);
        Set<String> now = new HashSet<>(objects.list(WorkerKeys.prefix(worker)));
        if (now.equals(before)) {
            return;
        }
        List<String> added = now.stream().filter(k -> !before.contains(k)).sorted().limit(5).toList();
        List<String> gone = before.stream().filter(k -> !now.contains(k)).sorted().limit(5).toList();
        throw new StoreException(STORE, null, null, "the takeover of worker " + worker + "'s range is refused: the bucket's keys of"
                + " the worker changed while its logs were read through SHA-256 (new: " + added + ", gone: " + gone + ", at most 5 each),"
                + " so another node of worker " + worker + " is writing (the old worker back, or a second replacement); "
                + NOTHING_CLAIMED + ". If the old worker is alive, stop this node: it needs no replacement; else stop the other"
                + " node and start this one again", null);
    }

    /** The refusal of a takeover of worker {@code worker}'s range for {@code why}; {@code state}: what it left. */
    static CorruptDataException refusal(long worker, String why, String state) {
        return new CorruptDataException(STORE, null, null, "the takeover of worker " + worker + "'s range is refused: " + why
                + " (the master's record of what the worker sealed and uploaded); " + state + ". Put the log object the worker"
                + " sealed back in the bucket (from the bucket's versioning or a replica, or from the old worker's range-data/data/ if"
                + " its disk survives) and start this node again (docs/operations.md \"A worker's log does not match the"
                + " master's record\")");
    }
}
