package org.holdfast.server.ingest.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;
import org.holdfast.common.io.DurableReplace;
import org.holdfast.common.protocol.StaleMarks;

/**
 * The master's forgets owed to workers whose dedup link was down when another worker's stale marks were
 * forwarded (cluster version 8, kept on the master since this release): so that a worker lost for good
 * does not hold up every other worker's marks, the master takes a part once every connected worker's
 * engine forgot it and keeps it here for each absent one, durably, until that worker's link is up again;
 * it is then delivered ({@link #deliver}) before the link serves any lookup. One directory per worker,
 * {@code <data-dir>/owed-forgets/<worker id>/}, each a {@link StaleMarkOutbox} (same part files, magic
 * "HFSM"), at most {@link #MAX_PARTS} parts. A part that does not fit, or an owed part that does not
 * read, is not kept: the worker is <em>distrusted</em> instead ({@value #DISTRUST}, a text file beside the
 * parts, kept until the worker is removed), and the master takes its answers naming another worker's range
 * as misses ({@link DedupLink#distrust}): dedup is missed, a freed block never named. The queues of workers
 * no longer registered go ({@link #retain}).
 */
public final class OwedForgets {
    private static final System.Logger LOG = System.getLogger(OwedForgets.class.getName());
    /** Parts owed to one worker at most (up to 2.6 MB each): a worker gone for months must not fill the master's disk. */
    public static final int MAX_PARTS = 64;
    /** The marker of a worker owed more than was kept. */
    static final String DISTRUST = "distrust";
    /** The directory of the owed forgets in a master's data directory. */
    public static final String DIRECTORY = "owed-forgets";

    private final Path dir;
    private final int maxParts;
    private final Map<Long, StaleMarkOutbox> queues = new ConcurrentHashMap<>();

    /** The forgets owed in {@code dir} (created at the first one), at most {@link #MAX_PARTS} parts a worker. */
    public OwedForgets(Path dir) {
        this(dir, MAX_PARTS);
    }

    /** As above, at most {@code maxParts} a worker. */
    OwedForgets(Path dir, int maxParts) {
        this.dir = dir;
        this.maxParts = maxParts;
        if (Files.isDirectory(dir)) {
            try (Stream<Path> s = Files.list(dir)) {
                s.map(p -> p.getFileName().toString()).filter(n -> n.matches("[1-9][0-9]{0,17}")) // a worker id; longer is no id of ours
                        .forEach(n -> queue(Long.parseLong(n)));
            } catch (IOException e) {
                throw new UncheckedIOException("cannot list the forgets owed in " + dir + ": " + e.getMessage(), e);
            }
        }
    }

    private StaleMarkOutbox queue(long workerId) {
        return queues.computeIfAbsent(workerId, id -> new StaleMarkOutbox(dir.resolve(Long.toString(id))));
    }

    /**
     * Keeps {@code marks} for worker {@code workerId}, forced to disk when this returns; if its queue is full the
     * worker is distrusted instead (logged once). Either way nothing of the part is lost for correctness.
     */
    void owe(long workerId, String nodeName, StaleMarks marks) {
        if (distrusted(workerId)) {
            return; // its answers outside its range are misses already: nothing more to keep
        }
        Path own = dir.resolve(Long.toString(workerId));
        if (!Files.isDirectory(own)) {
            try {
                Files.createDirectories(own);
                forceDirectory(dir); // the worker's directory survives a crash with the part written into it
            } catch (IOException e) {
                throw new UncheckedIOException("cannot create " + own + ": " + e.getMessage(), e);
            }
        }
        if (!queue(workerId).offer(marks.pbns(), marks.fps(), marks.count(), maxParts)) {
            distrust(workerId, nodeName, "it was owed more than " + maxParts + " parts of forgets while its link was down");
        }
    }

    /** Parts owed to worker {@code workerId} now. */
    int owed(long workerId) {
        StaleMarkOutbox q = queues.get(workerId);
        return q == null ? 0 : q.pending().size();
    }

    /** True once worker {@code workerId} was owed more than was kept: its answers naming another worker's range are misses. */
    public boolean distrusted(long workerId) {
        return Files.exists(dir.resolve(Long.toString(workerId)).resolve(DISTRUST));
    }

    /**
     * Delivers what worker {@code workerId} is owed over {@code w} (a proxy of its new link, not yet in service),
     * oldest part first, each deleted once the worker acknowledged its forget; a part that does not read
     * (deleted only once the marker is written) or is gone distrusts the worker. Throws if the link fails:
     * the parts not acknowledged stay for its next link.
     *
     * @return the marks delivered
     */
    long deliver(long workerId, String nodeName, RemoteDedupWorker w) {
        StaleMarkOutbox q = queues.get(workerId);
        if (q == null) {
            return 0;
        }
        long delivered = 0;
        for (long id = q.oldest(); id != 0; id = q.oldest()) {
            StaleMarks m;
            try {
                m = q.readKept(id);
            } catch (IllegalStateException | UncheckedIOException e) {
                // the marker first: if it cannot be written the part stays owed, never dropped without it; a read that
                // fails is not retried: it would keep the worker's link out of service (and every GC waiting) for good
                distrust(workerId, nodeName, "a part of the forgets owed to it did not read (" + e.getMessage() + ")");
                continue;
            }
            if (m == null) {
                // listed and gone (deleted by hand): its forgets were never delivered
                distrust(workerId, nodeName, "a part of the forgets owed to it is gone");
                continue;
            }
            w.forget(m.pbns(), m.fps(), m.count());
            q.delete(id);
            delivered += m.count();
        }
        return delivered;
    }

    /** Drops what is owed to workers not in {@code registered} (removed: their ids are never handed out again). */
    void retain(Set<Long> registered) {
        for (Long id : Set.copyOf(queues.keySet())) {
            if (!registered.contains(id)) {
                queues.remove(id);
                deleteWorkerDirectory(dir.resolve(Long.toString(id)));
            }
        }
    }

    private void distrust(long workerId, String nodeName, String why) {
        writeMarker(dir, workerId, nodeName, why);
        StaleMarkOutbox q = queues.get(workerId);
        if (q != null) {
            for (long id : q.pending()) {
                try {
                    q.delete(id); // the marker covers them all
                } catch (UncheckedIOException e) { // it is listed again at the next start and covered again
                    LOG.log(System.Logger.Level.WARNING, e.getMessage() + "; the distrust marker covers it");
                }
            }
        }
        LOG.log(System.Logger.Level.WARNING, "dedup worker " + nodeName + " (id " + workerId + ") is distrusted: " + why + "; from now on"
                + " the master takes its answers naming another worker's PBNs as misses (dedup missed, never a freed block named),"
                + " until the worker is removed; a worker lost for good is replaced (docs/operations.md)");
    }

    /**
     * Distrusts {@code workerIds} in the owed forgets of the master data directory {@code dataDir}, offline
     * (catalog-restore): a catalog backup holds neither the forgets owed when it was taken nor the markers,
     * so a restored master cannot tell what its workers missed. Costs dedup only on answers naming another
     * worker's range, which a worker's engine does not normally hold.
     */
    public static void distrustAll(Path dataDir, Iterable<Long> workerIds, String why) {
        Path d = dataDir.resolve(DIRECTORY);
        for (long id : workerIds) {
            writeMarker(d, id, "restored registry", why);
        }
    }

    private static void writeMarker(Path dir, long workerId, String nodeName, String why) {
        String text = Instant.now() + " worker " + workerId + " (" + nodeName + "): " + why + "\n";
        try {
            Files.createDirectories(dir);
            DurableReplace.write(dir.resolve(Long.toString(workerId)), DISTRUST, ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)));
            forceDirectory(dir);
            forceDirectory(dir.getParent()); // the first marker may have made the directory itself
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + dir.resolve(Long.toString(workerId)).resolve(DISTRUST) + ": " + e.getMessage(), e);
        }
    }

    private static void forceDirectory(Path d) throws IOException {
        try (FileChannel c = FileChannel.open(d, StandardOpenOption.READ)) {
            c.force(true);
        }
    }

    /** Deletes a worker's directory: its files only (parts, a temporary part, the marker), then itself. */
    private static void deleteWorkerDirectory(Path d) {
        try {
            if (Files.isDirectory(d)) {
                try (Stream<Path> files = Files.list(d)) {
                    for (Path f : files.toList()) {
                        Files.deleteIfExists(f);
                    }
                }
                Files.deleteIfExists(d);
            }
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, "cannot delete the forgets owed in " + d + " (" + e.getMessage() + "); they are"
                    + " tried again at the next start of the master");
        }
    }
}
