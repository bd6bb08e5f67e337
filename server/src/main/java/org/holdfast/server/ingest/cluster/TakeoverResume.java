package org.holdfast.server.ingest.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.LongFunction;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.holdfast.common.id.PbnRange;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.RangeTakeover;
import org.holdfast.server.store.SealedLogs;
import org.holdfast.server.store.StoreException;
import org.holdfast.server.store.TakeoverCheck;
import org.holdfast.server.store.object.ObjectStore;

/**
 * A takeover of a worker's range that a crash interrupted in {@code range-data} (its
 * {@link RangeEpochs#TAKEOVER_INCOMPLETE} file present), finished at its own epoch on the next start
 * rather than leaving the operator to move the directory away and use up the next epoch.
 */
final class TakeoverResume {
    private final Path dir;

    TakeoverResume(Path dir) {
        this.dir = dir;
    }

    /**
     * Finishes a takeover a crash interrupted: the epoch named in {@code incomplete} was claimed by this
     * directory (its marker is written create-only before the file), and the store was never opened
     * (the file goes last), so what the directory holds is only the partial build: it is wiped and the
     * adoption runs again from the marker's list. Refused if another node took the range over since
     * (the bucket holds a later epoch): this directory's claim is then stale. The adopted logs are checked
     * against {@code records} as at the takeover ({@link TakeoverCheck}).
     */
    long resume(long id, PbnRange r, ObjectStore objects, Supplier<MetadataDb> openDb, Path incomplete, LongFunction<SealedLogs> records) {
        long e = incompleteEpoch(incomplete);
        String moveAway = ": stop this worker, move " + dir + " away and start it again (on an empty directory it takes the range over"
                + " at the next epoch)";
        if (e < 1) {
            throw new StoreException("range-data", incomplete.toString(), null, "a takeover of worker " + id + "'s range was interrupted"
                    + " in " + dir + ", and " + incomplete.getFileName() + " does not name its epoch" + moveAway, null);
        }
        long of = incompleteWorker(incomplete);
        if (of != 0 && of != id) {
            // its epoch is worker `of`'s claim: resumed as `id`'s, it would archive at an epoch of id's another node claimed
            throw new StoreException("range-data", incomplete.toString(), null, "a takeover of worker " + of + "'s range at epoch " + e
                    + " was interrupted in " + dir + ", but the master registered this node as worker " + id + ": the directory holds"
                    + " another worker's partial takeover" + moveAway, null);
        }
        SealedLogs sealed = records.apply(id);
        RangeTakeover.Plan next = TakeoverCheck.plan(id, objects, sealed); // our marker's list, as the next takeover would read it
        if (next.epoch() != e + 1) {
            throw new StoreException("range-data", incomplete.toString(), null, "a takeover of worker " + id + "'s range at epoch " + e
                    + " was interrupted in " + dir + ", and the bucket now holds epoch " + (next.epoch() - 1) + ": another node took the"
                    + " range over since, so this directory's claim is stale" + moveAway, null);
        }
        for (String sub : new String[] {"catalog", "data", "takeover-scratch"}) {
            deleteTree(dir.resolve(sub)); // never opened as a store: only the interrupted build's files
        }
        RangeTakeover.Plan ours = new RangeTakeover.Plan(id, e, next.adopted());
        RangeTakeover.Report done = RangeTakeover.adopt(ours, dir.resolve("data"), openDb.get(), r, objects, dir.resolve("takeover-scratch"),
                sealed);
        try {
            Files.delete(incomplete);
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
        RangeEpochs.logTakeover("resumed an interrupted takeover and took", id, r, e, done);
        return e;
    }

    /** The epoch {@code incomplete} names ("a takeover at epoch E began ..."), or 0 if it names none. */
    static long incompleteEpoch(Path incomplete) {
        return named(incomplete, "^a takeover at epoch ([1-9][0-9]{0,17}) began");
    }

    /** The worker {@code incomplete} names (" of worker W" at its end), or 0 if it names none (a file of an older release). */
    static long incompleteWorker(Path incomplete) {
        return named(incomplete, " of worker ([1-9][0-9]{0,17})\\n?$");
    }

    /** The number {@code regex}'s group 1 finds in {@code incomplete}, or 0 if none (or the file cannot be read). */
    private static long named(Path incomplete, String regex) {
        String text;
        try {
            text = Files.readString(incomplete);
        } catch (IOException | UncheckedIOException ex) {
            return 0;
        }
        java.util.regex.Matcher m = java.util.regex.Pattern.compile(regex).matcher(text);
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }

    private static void deleteTree(Path p) {
        if (!Files.exists(p)) {
            return;
        }
        try (Stream<Path> files = Files.walk(p)) {
            for (Path f : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(f);
            }
        } catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
