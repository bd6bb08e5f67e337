package org.holdfast.server.engine;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Comparator;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.holdfast.common.protocol.StartOverReason;

/**
 * A {@link DedupWorker} that opens its engine on the first call: a worker process whose master does
 * not use distributed dedup never spends the engine's memory (SFI, Bloom chain, container cache).
 */
public final class LazyDedupWorker implements DedupWorker {
    private static final System.Logger LOG = System.getLogger(LazyDedupWorker.class.getName());
    /** Infix of a started-over index moved aside before its deletion: {@code dedup-worker.discarded-<nanos>}. */
    private static final String DISCARDED = ".discarded-";
    private final int id;
    private final Supplier<? extends DedupWorker> opener;
    private final Path dir; // what startOver deletes; null: nothing
    private DedupWorker engine; // guarded by this
    private boolean closed; // guarded by this
    private final AtomicLong forgotten = new AtomicLong();
    private final AtomicLong forgetsSkipped = new AtomicLong();

    public LazyDedupWorker(int id, Supplier<? extends DedupWorker> opener) {
        this(id, null, opener);
    }

    /** As above, with the engine keeping its files in {@code dir} (deleted by {@link #startOver}). */
    public LazyDedupWorker(int id, Path dir, Supplier<? extends DedupWorker> opener) {
        this.id = id;
        this.dir = dir;
        this.opener = opener;
    }

    /**
     * Closes the engine if open and deletes its directory: the next call opens an empty index. For
     * a worker the master registered as new (epoch 1), or one whose index was built for another
     * worker id ({@link #claim}): an index kept from an earlier membership could name PBNs the
     * master freed after removing that membership, and answering one as a duplicate would lose data.
     */
    public synchronized void startOver() {
        if (engine != null) {
            engine.close();
            engine = null;
        }
        if (dir == null || isEmpty(dir)) {
            return;
        }
        // out of the way in one rename first: a deletion stopped half-way (a crash, a file that will
        // not go) would leave part of the old index without its owner file, which the next
        // registration keeps (IndexOwnerFile: no file, an upgraded worker's index)
        Path discarded = dir.resolveSibling(dir.getFileName() + DISCARDED + System.nanoTime());
        try {
            Files.move(dir, discarded, StandardCopyOption.ATOMIC_MOVE);
            try (FileChannel parent = FileChannel.open(dir.getParent(), StandardOpenOption.READ)) {
                parent.force(true); // the rename survives a crash before the deletion
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot move the earlier dedup index " + dir + " out of the way (" + e.getMessage()
                    + "); delete that directory by hand before starting the worker", e);
        }
        deleteDiscarded();
    }

    /** True if {@code d} does not exist or holds nothing: no index to discard (and a mount point there needs no move). */
    private static boolean isEmpty(Path d) {
        try (var entries = Files.list(d)) {
            return entries.findAny().isEmpty();
        } catch (NoSuchFileException e) {
            return true;
        } catch (IOException e) {
            return false; // the move below reports it
        }
    }

    /** True if {@code d} holds anything beside the owner file (and its temporary file): an index a start-over loses. */
    private static boolean holdsMoreThanOwner(Path d) {
        try (var entries = Files.list(d)) {
            return entries.map(p -> p.getFileName().toString())
                    .anyMatch(n -> !n.equals(IndexOwnerFile.NAME) && !n.equals(IndexOwnerFile.TMP));
        } catch (NoSuchFileException e) {
            return false;
        } catch (IOException e) {
            return true; // unreadable: say it started over rather than hide a loss
        }
    }

    /**
     * Deletes what {@link #startOver} moved aside, this time or an earlier time it could not finish:
     * never read again, so a failure only costs space (logged, tried again at the next start-over).
     */
    private void deleteDiscarded() {
        String prefix = dir.getFileName() + DISCARDED;
        try (var siblings = Files.list(dir.getParent())) {
            for (Path old : siblings.filter(p -> p.getFileName().toString().startsWith(prefix)).toList()) {
                try (var files = Files.walk(old)) {
                    for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                        Files.delete(p);
                    }
                }
            }
        } catch (IOException | UncheckedIOException e) {
            LOG.log(System.Logger.Level.WARNING, "could not delete a discarded dedup index beside " + dir + " (" + e.getMessage()
                    + "); it is never read again: delete the directories named " + prefix + "* by hand to free their space");
        }
    }

    /**
     * Readies the index to serve worker {@code workerId}, registered just now at {@code epoch}, before
     * it serves any call of that registration: starts it over unless it served that worker at the
     * epoch before ({@link IndexOwnerFile#mustStartOver}: epoch 1, an owner file naming another id, or
     * an epoch gap, registrations it did not see), then records {@code workerId} and {@code epoch}.
     * Without a directory only epoch 1 starts over.
     *
     * @return why an index was discarded: null if it was kept, and also when a new worker (epoch 1)
     *     had no index to discard (nothing is lost, nothing to tell the master): none on disk, or only
     *     the owner file of a registration that stored no entry
     */
    public synchronized StartOverReason claim(long workerId, long epoch) {
        boolean hadIndex = dir != null && holdsMoreThanOwner(dir);
        StartOverReason why = claimed(workerId, epoch);
        return why == StartOverReason.NEW_MEMBERSHIP && !hadIndex ? null : why;
    }

    private StartOverReason claimed(long workerId, long epoch) {
        IndexOwnerFile owner = dir == null ? null : new IndexOwnerFile(dir);
        StartOverReason why = owner != null ? owner.startOverReason(workerId, epoch)
                : epoch == 1 ? StartOverReason.NEW_MEMBERSHIP : null;
        if (why != null) {
            startOver();
        }
        if (owner != null) {
            owner.write(workerId, epoch);
        }
        return why;
    }

    private synchronized DedupWorker engine() {
        if (closed) {
            throw new IllegalStateException("the dedup worker is closed");
        }
        if (engine == null) {
            engine = opener.get();
        }
        return engine;
    }

    @Override
    public int id() {
        return id;
    }

    @Override
    public CompletableFuture<SegmentAnswer> lookup(SegmentLookup request) {
        return engine().lookup(request);
    }

    @Override
    public CompletableFuture<ProbeAnswer> probe(SegmentProbe request) {
        return engine().probe(request);
    }

    @Override
    public CompletableFuture<Void> record(SegmentRecord request) {
        return engine().record(request);
    }

    @Override
    public void forget(long[] pbns, byte[] fps, int count) {
        engine().forget(pbns, fps, count);
        forgotten.addAndGet(count);
    }

    @Override
    public int forgetIfHeld(long[] pbns, byte[] fps, int count) {
        int skipped = engine().forgetIfHeld(pbns, fps, count);
        forgotten.addAndGet(count);
        forgetsSkipped.addAndGet(skipped);
        return skipped;
    }

    /**
     * Of {@link #forgotten}, the PBNs of other workers' ranges (stale marks the master forwarded) that
     * cost nothing: the engine's memory said it cannot hold their fingerprints.
     */
    public long forgetsSkipped() {
        return forgetsSkipped.get();
    }

    /**
     * PBNs this worker was told to forget (its master's GC freed them) since the process started:
     * every worker connected during a sweep gets all of them, so an operator can see that GC reached it.
     */
    public long forgotten() {
        return forgotten.get();
    }

    @Override
    public void closeStream(long stream) {
        engine().closeStream(stream);
    }

    @Override
    public void flush() {
        engine().flush();
    }

    @Override
    public DedupLoad load() {
        return engine().load();
    }

    /**
     * The engine's load if it is open, else null: metrics read it, and reading must not open the
     * engine (and so spend its memory) on a worker whose master never called it.
     */
    public DedupLoad loadIfOpen() {
        DedupWorker e;
        synchronized (this) {
            e = closed ? null : engine;
        }
        return e == null ? null : e.load();
    }

    /** The Sungem engine if it is open and this process runs it (tests, diagnostics), else null; opens nothing. */
    public SungemFingerprintIndex sungemIfOpen() {
        DedupWorker e;
        synchronized (this) {
            e = closed ? null : engine;
        }
        return e instanceof LocalDedupWorker l ? l.engine() : null;
    }

    /** Whether the engine was opened (tests, diagnostics). */
    public synchronized boolean isOpen() {
        return engine != null && !closed;
    }

    @Override
    public synchronized void close() {
        closed = true;
        if (engine != null) {
            engine.close();
        }
    }
}
