package org.holdfast.server.ingest.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.LongFunction;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.holdfast.common.id.PbnRange;
import org.holdfast.server.store.LateUploads;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.RangeTakeover;
import org.holdfast.server.store.SealedLogs;
import org.holdfast.server.store.StoreException;
import org.holdfast.server.store.TakeoverCheck;
import org.holdfast.server.store.WorkerKeys;
import org.holdfast.server.store.object.ObjectStore;

/**
 * The takeover epoch of a worker's archiving range store in {@code range-data}: on an empty directory
 * planned from the bucket (epoch 1, or a takeover that adopts the range's logs), else the epoch its
 * catalog records; and the fence: a store whose worker the bucket shows taken over at a later epoch
 * serves nothing, since what it would write is read by nobody; one that is the range's owner deletes
 * the late uploads of an old node ({@link LateUploads}) from the same listing of the bucket.
 */
final class RangeEpochs {
    private static final System.Logger LOG = System.getLogger(RangeEpochs.class.getName());
    /** A file in the directory while a takeover builds the store: present at open, the takeover was interrupted. */
    static final String TAKEOVER_INCOMPLETE = "takeover-incomplete";

    private final Path dir;

    RangeEpochs(Path dir) {
        this.dir = dir;
    }

    /**
     * The epoch the store of worker {@code id} archives under, its catalog opened by {@code openDb}: on
     * an empty directory the plan from the bucket (epoch 1 if it holds nothing of the worker, else a
     * takeover: the marker claimed, the store built from the adopted logs); on an existing store its
     * recorded epoch (1 for a store made before it archived), refused if the bucket holds a later one; a
     * takeover a crash interrupted is finished at its epoch ({@link TakeoverResume}). The owner's late
     * uploads are deleted: on an existing store from its fence check's listing; after a takeover from a
     * listing after its claim (an old node may have uploaded since the plan's); at epoch 1 none can exist.
     * A takeover (or its resume) checks the logs it adopts against the master's records of the worker's
     * sealed logs, asked of {@code records} only then ({@link TakeoverCheck}); {@code sha256}: a takeover
     * reads every recorded log through SHA-256 before it claims its epoch, else it checks their sizes only.
     * A takeover of epoch 2 or more claims only if {@code linked} still says true after that read (the node's
     * link to the master held throughout), else {@link TakeoverLinkLostException}, nothing claimed.
     */
    long atOpen(long id, PbnRange r, ObjectStore objects, Supplier<MetadataDb> openDb, LongFunction<SealedLogs> records,
                boolean sha256, BooleanSupplier linked) {
        Path incomplete = dir.resolve(TAKEOVER_INCOMPLETE);
        if (Files.exists(incomplete)) {
            long e = new TakeoverResume(dir).resume(id, r, objects, openDb, incomplete, records);
            deleteLateUploads(id, e, objects, objects.list(WorkerKeys.prefix(id)));
            return e;
        }
        if (!Files.exists(dir.resolve("catalog")) && !hasLogs()) {
            RangeTakeover.Plan plan = RangeTakeover.plan(id, objects);
            SealedLogs sealed = SealedLogs.NONE;
            if (plan.epoch() > 1) {
                sealed = records.apply(id);
                plan = TakeoverCheck.plan(id, objects, sealed, sha256); // a refusal claims nothing
            }
            if (plan.epoch() == 1) {
                // claimed create-only as a takeover's epoch is: a second fresh node of this worker on the empty
                // bucket refuses here; a crash before the catalog exists leaves a marker, and the restart takes epoch 2
                RangeTakeover.claim(plan, objects, dir.resolve("takeover-scratch"));
                openDb.get();
                return 1;
            }
            if (!linked.getAsBoolean()) {
                // the master holds the old node off only while it hears this one (cluster.TakeoverInProgress)
                throw new TakeoverLinkLostException(dir.toString(), id, plan.epoch());
            }
            // claimed first: a refused claim leaves nothing here; a crash between the two, a marker whose next takeover adopts its list
            RangeTakeover.claim(plan, objects, dir.resolve("takeover-scratch"));
            markIncomplete(incomplete, id, plan.epoch());
            RangeTakeover.Report done = RangeTakeover.adopt(plan, dir.resolve("data"), openDb.get(), r, objects,
                    dir.resolve("takeover-scratch"), sealed);
            try {
                Files.delete(incomplete);
            } catch (IOException ex) {
                throw new UncheckedIOException(ex);
            }
            logTakeover("took", id, r, plan.epoch(), done);
            deleteLateUploads(id, plan.epoch(), objects, objects.list(WorkerKeys.prefix(id)));
            return plan.epoch();
        }
        long e = Math.max(RangeTakeover.storedEpoch(openDb.get(), id), 1);
        StoreException takenOver = fence(id, e, objects);
        if (takenOver != null) {
            throw takenOver;
        }
        return e;
    }

    /**
     * The fence check of worker {@code id}'s store archiving at {@code epoch}, from one listing of the
     * worker's keys: the refusal to serve if the bucket holds a later epoch, else null, the late uploads
     * of an old node in that listing deleted first.
     */
    StoreException fence(long id, long epoch, ObjectStore objects) {
        List<String> listing = objects.list(WorkerKeys.prefix(id));
        StoreException takenOver = takenOverSince(id, epoch, listing);
        if (takenOver == null) {
            deleteLateUploads(id, epoch, objects, listing);
        }
        return takenOver;
    }

    static void logTakeover(String how, long id, PbnRange r, long epoch, RangeTakeover.Report done) {
        LOG.log(System.Logger.Level.WARNING, "{0} worker {1}''s range {2} over from the object store at epoch {3}: adopted {4}"
                + " sealed logs holding {5} blocks; new logs go to {6}/. Its GC counts are lost until they are rebuilt from the"
                + " master''s catalog (docs/operations.md \"Replace a dead worker\")", how, Long.toString(id), r,
                Long.toString(epoch), done.logs(), done.blocks(), WorkerKeys.space(id, epoch));
    }

    /**
     * The refusal to serve if {@code listing} (the worker's keys) holds a later epoch of worker {@code id}
     * than {@code epoch} (0 counts as 1: a store made before it archived), i.e. another node took the
     * range over; else null.
     */
    private StoreException takenOverSince(long id, long epoch, List<String> listing) {
        long was = Math.max(epoch, 1);
        long newest = RangeTakeover.highestEpoch(id, listing);
        if (newest <= was) {
            return null;
        }
        return new StoreException("range-data", dir.toString(), null, "worker " + id + "'s range was taken over at epoch " + newest
                + " by another node while this range-data directory archives at epoch " + was + ": what it would"
                + " write is read by nobody, so it serves nothing. Stop this worker; if it should own the range again, move "
                + dir + " away and start it (it takes the range over at the next epoch)", null);
    }

    /**
     * As the range's owner at {@code epoch}: deletes what an old node uploaded under an older epoch after
     * the range was taken over, found in {@code listing}; a bucket that refuses just now is tried again
     * at the next registration, and serving goes on.
     */
    private static void deleteLateUploads(long id, long epoch, ObjectStore objects, List<String> listing) {
        try {
            List<String> late = LateUploads.delete(id, epoch, listing, objects);
            if (!late.isEmpty()) {
                LOG.log(System.Logger.Level.WARNING, "deleted {0} sealed logs that an old node of worker {1} uploaded under an epoch below"
                        + " {2} after its range was taken over (nobody reads them): {3}", late.size(), Long.toString(id),
                        Long.toString(epoch), late);
            }
        } catch (RuntimeException ex) {
            LOG.log(System.Logger.Level.WARNING, "could not delete the late uploads of an old node of worker {0} now ({1}); tried"
                    + " again at its next registration", Long.toString(id), ex.toString());
        }
    }

    private void markIncomplete(Path incomplete, long id, long epoch) {
        try {
            Files.createDirectories(dir);
            // the worker too: a resume under another worker id must not finish this one's claim as its own
            Files.writeString(incomplete, "a takeover at epoch " + epoch + " began " + java.time.Instant.now() + " of worker " + id + "\n");
            // durable before the catalog exists: after a power loss a partial catalog without it would be taken for a
            // finished store of an older epoch ("taken over by another node"), not for this interrupted takeover
            try (FileChannel f = FileChannel.open(incomplete, StandardOpenOption.WRITE);
                 FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
                f.force(true);
                d.force(true);
            }
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }

    private boolean hasLogs() {
        Path data = dir.resolve("data");
        if (!Files.isDirectory(data)) {
            return false;
        }
        try (Stream<Path> files = Files.list(data)) {
            return files.findAny().isPresent();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
