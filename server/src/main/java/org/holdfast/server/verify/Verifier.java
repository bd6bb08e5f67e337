package org.holdfast.server.verify;

import com.google.common.util.concurrent.RateLimiter;
import java.lang.System.Logger.Level;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongFunction;
import org.holdfast.common.compress.BlockCodec;
import org.holdfast.common.hash.BlockHasher;
import org.holdfast.common.id.Fingerprint;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.id.VolumeId;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.MapCursor;
import org.holdfast.server.catalog.SnapshotRecord;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.jobs.JobCancelledException;
import org.holdfast.server.jobs.JobContext;
import org.holdfast.server.store.BadBlocks;
import org.holdfast.server.store.BlockBatch;
import org.holdfast.server.store.BlockHome;
import org.holdfast.server.store.BlocksUnavailableException;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.DamagedBlockException;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.LocalBlockHome;
import org.holdfast.server.store.StoredBlock;
import org.holdfast.server.store.VerifyLedger;

/**
 * One verification pass: reads every block the snapshots in scope reference, once per pass however
 * many snapshots share it, and checks its record (magic, header and data CRC32C) and that its
 * stored bytes decode to the fingerprint the location index holds (a member of a frame record:
 * the frame decodes and the member's bytes match its own fingerprint). A block that fails goes to the
 * store's {@link BadBlocks} registry at once.
 *
 * <p>Blocks are read through the {@link BlockHome}: the store itself, or with the blocks on the
 * workers ({@code holdfast.cluster.data=workers}) each range's owner, whose record check a damaged
 * block fails there ({@link DamagedBlockException}) and whose answer the pass decodes and hashes here.
 * A block whose worker is not connected, or whose read call fails, is unreadable now, not damaged: it
 * is counted per worker ({@link BlockHolder}), never marked bad, and a snapshot with such a block keeps
 * its earlier result (it was not checked whole). Reads run on {@code threads} threads, paced by a
 * shared rate limiter so that backups keep their speed. Incremental: a block found sound within the
 * window is not read again (its time is in the {@link VerifyLedger}), unless the pass is full. Each
 * snapshot's result (when, and the LBNs whose blocks are bad) is recorded as soon as its blocks are
 * checked, so a cancelled pass keeps what it finished.
 */
public final class Verifier {
    private static final System.Logger LOG = System.getLogger(Verifier.class.getName());
    /** PBNs one reader task takes at a time. */
    static final int CHUNK = 64;
    private static final int BATCH_BUFFER_BYTES = 4 << 20;
    private static final long[] NONE = new long[0];

    /**
     * What a pass did; {@code unreadableNow} counts blocks that could not be read (their worker down, a call failed), which
     * {@code unreadable} explains per holder, and {@code uncheckedSnapshots} lists the snapshots that hold such blocks.
     */
    public record Report(String scope, long snapshots, long blocksReferenced, long blocksRead, long bytesRead,
                         long blocksSkippedRecent, long badBlocks, long newlyBad, List<String> damagedSnapshots,
                         long durationMillis, long unreadableNow, List<String> unreadable, List<String> uncheckedSnapshots) {
    }

    /** Where a block lives, for reports: a name an operator knows (a worker's node and id) and the PBN range it holds. */
    public record BlockHolder(String name, PbnRange range) {
        /** The store itself, holding every PBN. */
        public static final BlockHolder LOCAL = new BlockHolder("this server", PbnRange.STANDALONE);
    }

    private final Catalog catalog;
    private final DataStore store;
    private final BlockHome home;
    private final LongFunction<BlockHolder> holders;
    private final VerifyLedger ledger;
    private final VerifySettings settings;
    private final Clock clock;
    // buffers of the reader threads, taken by each chunk and given back (one per thread at most)
    private final java.util.concurrent.ConcurrentLinkedQueue<Reader> readers = new java.util.concurrent.ConcurrentLinkedQueue<>();

    /** A verifier of the blocks in {@code store} itself. */
    public Verifier(Catalog catalog, DataStore store, VerifyLedger ledger, VerifySettings settings, Clock clock) {
        this(catalog, store, new LocalBlockHome(store), pbn -> BlockHolder.LOCAL, ledger, settings, clock);
    }

    /**
     * A verifier that reads blocks through {@code home} and names their holders with {@code holders}; bad-block marks and
     * the ledger stay in {@code store}'s metadata (records about PBNs, wherever the blocks live).
     */
    public Verifier(Catalog catalog, DataStore store, BlockHome home, LongFunction<BlockHolder> holders, VerifyLedger ledger,
                    VerifySettings settings, Clock clock) {
        this.catalog = catalog;
        this.store = store;
        this.home = home;
        this.holders = holders;
        this.ledger = ledger;
        this.settings = settings;
        this.clock = clock;
    }

    public VerifySettings settings() {
        return settings;
    }

    /** The snapshots a scope covers, oldest first per volume; unknown names throw the catalog's exceptions. */
    public List<SnapshotRecord> snapshots(VerifyScope scope) {
        if (scope.volume() == null) {
            List<SnapshotRecord> out = new ArrayList<>();
            for (VolumeRecord v : catalog.volumes()) {
                out.addAll(catalog.snapshots(v));
            }
            return out;
        }
        VolumeId id = new VolumeId(scope.volume());
        if (scope.sequence() != null) {
            return List.of(catalog.requireSnapshot(id, scope.sequence()));
        }
        return catalog.snapshots(id);
    }

    /** Makes the next pass read {@code pbns} even if they were found sound within the window (they are suspect). */
    public void forgetVerified(long[] pbns) {
        ledger.forget(pbns);
    }

    /** Runs one pass over {@code scope}, reporting progress (snapshots, bytes read) and stopping at safe points when cancelled. */
    public Report run(VerifyScope scope, JobContext job) throws InterruptedException {
        return run(scope, false, job);
    }

    /** Like {@link #run(VerifyScope, JobContext)}; {@code full} reads every block, also those found sound within the window. */
    public Report run(VerifyScope scope, boolean full, JobContext job) throws InterruptedException {
        long t0 = System.nanoTime();
        List<SnapshotRecord> snaps = snapshots(scope);
        job.total(snaps.size(), -1);
        job.log("verify " + scope.describe() + ": " + snaps.size() + " snapshots, " + settings.threads() + " threads, "
                + (settings.bytesPerSecond() == 0 ? "no rate limit" : settings.bytesPerSecond() + " B/s")
                + (full ? ", reading every block (full)" : ", skipping blocks found sound within " + settings.window().toMinutes() + " min"));
        int badBefore = store.badBlocks().count();
        RateLimiter limiter = settings.bytesPerSecond() > 0 ? RateLimiter.create(settings.bytesPerSecond()) : null;
        PbnSet seen = new PbnSet();
        PbnSet damagedSeen = new PbnSet();
        PbnSet unreadableSeen = new PbnSet();
        Unreadable unreadable = new Unreadable();
        List<String> uncheckedSnapshots = new ArrayList<>();
        long referenced = 0;
        long skipped = 0;
        AtomicLong blocksRead = new AtomicLong();
        AtomicLong bytesRead = new AtomicLong();
        List<String> damagedSnapshots = new ArrayList<>();
        int nowMinute = VerifyLedger.minutes(clock.millis());
        long windowMinutes = full ? 0 : settings.window().toMinutes();
        ExecutorService pool = Executors.newFixedThreadPool(settings.threads(), r -> {
            Thread t = new Thread(r, "holdfast-verify");
            t.setDaemon(true);
            return t;
        });
        try {
            long[] lbns = new long[1024];
            long[] pbns = new long[1024];
            for (SnapshotRecord s : snaps) {
                job.checkpoint();
                VolumeRecord v = catalog.volume(s.volume()).orElse(null);
                if (v == null) {
                    continue; // deleted meanwhile
                }
                // the snapshot's mapped blocks, in LBN order
                int n = 0;
                try (MapCursor c = catalog.mapCursor(v.internalId())) {
                    c.startScan(s.sequence(), 0, s.blockCount());
                    while (c.nextMapped()) {
                        if (c.pbn() == 0) {
                            continue;
                        }
                        if (n == lbns.length) {
                            lbns = Arrays.copyOf(lbns, n * 2);
                            pbns = Arrays.copyOf(pbns, n * 2);
                        }
                        lbns[n] = c.lbn();
                        pbns[n] = c.pbn();
                        n++;
                    }
                }
                referenced += n;
                // the blocks this pass has not looked at yet and that were not found sound recently
                long[] toRead = new long[n];
                int m = 0;
                for (int i = 0; i < n; i++) {
                    long p = pbns[i];
                    if (!seen.add(p)) {
                        continue; // read already in this pass
                    }
                    if (store.badBlocks().isBad(p)) {
                        continue; // known bad: reported below without another read
                    }
                    if (windowMinutes > 0) {
                        int at = ledger.verifiedAt(p);
                        if (at >= 0 && nowMinute - at < windowMinutes) {
                            skipped++;
                            continue;
                        }
                    }
                    toRead[m++] = p;
                }
                Arrays.sort(toRead, 0, m);
                long bytesBefore = bytesRead.get();
                List<Future<Checked>> parts = new ArrayList<>();
                for (int from = 0; from < m; from += CHUNK) {
                    long[] chunk = Arrays.copyOfRange(toRead, from, Math.min(m, from + CHUNK));
                    parts.add(pool.submit(() -> check(chunk, limiter, job, blocksRead, bytesRead, unreadable)));
                }
                for (Future<Checked> f : parts) {
                    long[] sound;
                    try {
                        Checked c = f.get();
                        sound = c.sound();
                        for (long p : c.unreadable()) {
                            unreadableSeen.add(p);
                        }
                    } catch (ExecutionException e) {
                        parts.forEach(p -> p.cancel(true));
                        if (e.getCause() instanceof JobCancelledException c) {
                            throw c;
                        }
                        throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
                    }
                    ledger.verified(sound, sound.length, nowMinute);
                }
                // the snapshot's result: every LBN whose block is bad now
                List<VerifyLedger.Damage> damaged = new ArrayList<>();
                long damagedCount = 0;
                for (int i = 0; i < n; i++) {
                    if (store.badBlocks().isBad(pbns[i])) {
                        damagedCount++;
                        damagedSeen.add(pbns[i]);
                        if (damaged.size() < VerifyLedger.MAX_DAMAGED_LISTED) {
                            damaged.add(new VerifyLedger.Damage(lbns[i], pbns[i]));
                        }
                    }
                }
                long notRead = 0;
                for (int i = 0; i < n && !unreadableSeen.isEmpty(); i++) {
                    if (unreadableSeen.contains(pbns[i])) {
                        notRead++;
                    }
                }
                if (notRead == 0) {
                    ledger.putSnapshot(v.internalId(), s.sequence(), new VerifyLedger.SnapshotResult(clock.millis(), n, damagedCount, damaged));
                } else {
                    // not checked whole: its earlier result stands, and the next pass reads what could not be read now
                    uncheckedSnapshots.add(s.id().toString());
                    job.log("snapshot " + s.id() + ": " + notRead + " blocks unreadable now (not marked bad); its result is not recorded");
                }
                if (damagedCount > 0) {
                    damagedSnapshots.add(s.id().toString());
                    String first = damaged.stream().limit(5).map(d -> "LBN " + d.lbn() + " (PBN " + d.pbn() + ")").toList().toString();
                    job.log("snapshot " + s.id() + ": " + damagedCount + " damaged blocks, first " + first);
                    LOG.log(Level.ERROR, "verify: snapshot " + s.id() + " references " + damagedCount + " bad blocks, first " + first
                            + (home.keepsBlocksOnWorkers() ? "; a backup of the healthy source repairs them on their workers (a"
                            + " worker that is down or older gets no repair: the next snapshot has new copies, and this one stays damaged)"
                            : "; a backup of the healthy source repairs them"));
                }
                job.advance(1, bytesRead.get() - bytesBefore);
            }
        } finally {
            pool.shutdownNow();
            pool.awaitTermination(1, TimeUnit.MINUTES);
            for (Reader r; (r = readers.poll()) != null; ) {
                r.close();
            }
        }
        long newlyBad = Math.max(0, store.badBlocks().count() - badBefore);
        List<String> unreadableLines = unreadable.lines();
        for (String line : unreadableLines) {
            job.log(line);
            LOG.log(Level.WARNING, "verify: " + line);
        }
        Report r = new Report(scope.describe(), snaps.size(), referenced, blocksRead.get(), bytesRead.get(), skipped,
                damagedSeen.size(), newlyBad, List.copyOf(damagedSnapshots), (System.nanoTime() - t0) / 1_000_000,
                unreadableSeen.size(), unreadableLines, List.copyOf(uncheckedSnapshots));
        job.log("verify " + scope.describe() + ": " + (r.badBlocks() == 0 ? "clean" : r.badBlocks() + " bad blocks in "
                + damagedSnapshots.size() + " snapshots") + (r.unreadableNow() == 0 ? "" : ", " + r.unreadableNow()
                + " blocks unreadable now in " + uncheckedSnapshots.size() + " snapshots (not checked, not marked bad)")
                + ", " + r.blocksRead() + " blocks (" + r.bytesRead() + " B) read, " + skipped + " skipped as recently verified");
        return r;
    }

    /** What one chunk's check found: the sound PBNs, and those that could not be read now. */
    private record Checked(long[] sound, long[] unreadable) {
    }

    /** Reads and checks the PBNs of one chunk (ascending). Runs on a reader thread. */
    private Checked check(long[] chunk, RateLimiter limiter, JobContext job, AtomicLong blocksRead, AtomicLong bytesRead,
                          Unreadable unreadable) {
        if (job.cancelRequested()) {
            throw new JobCancelledException();
        }
        Reader r = readers.poll();
        if (r == null) {
            r = new Reader();
        }
        try {
            return checkWith(chunk, r, limiter, blocksRead, bytesRead, unreadable);
        } finally {
            readers.add(r);
        }
    }

    private Checked checkWith(long[] chunk, Reader r, RateLimiter limiter, AtomicLong blocksRead, AtomicLong bytesRead,
                              Unreadable unreadable) {
        long[] sound = new long[chunk.length];
        int ok = 0;
        long[] notRead = NONE;
        int notReadCount = 0;
        int from = 0;
        while (from < chunk.length) {
            int got;
            try {
                got = home.readBatch(chunk, from, chunk.length - from, r.batch);
            } catch (DamagedBlockException e) {
                // its record failed its check where it lives (a worker, which answered the blocks before it already)
                markBad(e.pbn(), e.fingerprint(), 0, "damaged on its worker: " + e.problem());
                LOG.log(Level.WARNING, "verify: " + e.getMessage());
                blocksRead.incrementAndGet();
                from++;
                continue;
            } catch (BlocksUnavailableException e) {
                // the worker holding the run is not reachable now: the run is unreadable, not damaged, and nothing is marked
                BlockHolder h = holders.apply(chunk[from]);
                int end = from + 1;
                while (end < chunk.length && h.range().contains(chunk[end])) {
                    end++;
                }
                unreadable.add(h, end - from, e.getMessage());
                if (notRead.length < notReadCount + end - from) {
                    notRead = Arrays.copyOf(notRead, chunk.length);
                }
                System.arraycopy(chunk, from, notRead, notReadCount, end - from);
                notReadCount += end - from;
                from = end;
                continue;
            } catch (CorruptDataException e) {
                // some record of the rest failed: check them one by one, so each bad one is named and marked
                for (int i = from; i < chunk.length; i++) {
                    if (checkOne(chunk[i], r, limiter, blocksRead, bytesRead)) {
                        sound[ok++] = chunk[i];
                    }
                }
                break;
            }
            long bytes = 0;
            for (int i = 0; i < got; i++) {
                // a frame member counts its share of the frame, which the batch read once
                bytes += r.batch.storedLength(i) / r.batch.frameMembers(i);
                if (batchMatches(r, i)) {
                    sound[ok++] = r.batch.pbn(i);
                } else {
                    markBad(r.batch.pbn(i), r.batch.fingerprints(), r.batch.fingerprintOffset(i),
                            "stored bytes do not decode to the block's fingerprint");
                }
            }
            pace(limiter, bytes);
            blocksRead.addAndGet(got);
            bytesRead.addAndGet(bytes);
            from += got;
        }
        return new Checked(Arrays.copyOf(sound, ok), Arrays.copyOf(notRead, notReadCount));
    }

    /**
     * Records {@code pbn} bad: in the store's own registry through its location, or, for a block on a worker (which the
     * master's store holds no location of), with the fingerprint the worker holds and the worker as its file.
     */
    private void markBad(long pbn, byte[] fps, int fpOff, String problem) {
        if (home.keepsBlocksOnWorkers()) {
            store.badBlocks().mark(pbn, fps, fpOff, holders.apply(pbn).name(), problem);
        } else {
            store.markDamaged(pbn, problem);
        }
    }

    /** Blocks a pass could not read now, per holder, with the first reason each gave; shared by the reader threads. */
    private static final class Unreadable {
        private final Map<String, long[]> counts = new ConcurrentHashMap<>();
        private final Map<String, String> reasons = new ConcurrentHashMap<>();

        void add(BlockHolder h, int blocks, String why) {
            long[] c = counts.computeIfAbsent(h.name(), k -> new long[1]);
            synchronized (c) {
                c[0] += blocks;
            }
            reasons.putIfAbsent(h.name(), why);
        }

        /** One line per holder: how many blocks, why, and what to do. */
        List<String> lines() {
            List<String> out = new ArrayList<>();
            new TreeMap<>(counts).forEach((name, c) -> out.add(c[0] + " blocks on " + name + " are unreadable now (" + reasons.get(name)
                    + "); they are not marked bad: bring the worker back (GET /api/v1/cluster shows its state) and verify again"));
            return out;
        }
    }

    private boolean checkOne(long pbn, Reader r, RateLimiter limiter, AtomicLong blocksRead, AtomicLong bytesRead) {
        try {
            store.read(pbn, r.block);
        } catch (CorruptDataException e) {
            // a failed record check marked the block bad already, and a missing location cannot be repaired
            // (fsck reports it; markDamaged refuses it); a block whose data log is missing (lost with a disk,
            // a catalog restored over logs that lack it) is marked here, so the volume is flagged and the next
            // backup holding its content is turned full and repairs it
            store.markDamaged(pbn, e.getMessage());
            LOG.log(Level.WARNING, "verify: " + e.getMessage());
            blocksRead.incrementAndGet();
            return false;
        }
        int len = r.block.storedLength();
        pace(limiter, len);
        blocksRead.incrementAndGet();
        bytesRead.addAndGet(len);
        if (!fingerprintMatches(r, r.block.codec(), r.block.data(), r.block.dataOffset(), len, r.block.rawLength(), r.block.fingerprint(), 0)) {
            store.markDamaged(pbn, "stored bytes do not decode to the block's fingerprint");
            return false;
        }
        return true;
    }

    private static void pace(RateLimiter limiter, long bytes) {
        if (limiter != null && bytes > 0) {
            limiter.acquire((int) Math.min(Integer.MAX_VALUE, bytes));
        }
    }

    /** Decodes block i of the reader's batch (a frame member from its frame, decoded once per run of members) and checks its SHA-256. */
    private static boolean batchMatches(Reader r, int i) {
        try {
            int rawLength = r.batch.rawLength(i);
            if (rawLength <= 0 || rawLength > FormatVersions.MAX_BLOCK_SIZE) {
                return false;
            }
            r.batch.decode(i, r.codec, r.raw, 0);
            r.hasher.sha256(r.raw, 0, rawLength, r.digest, 0);
            return Arrays.equals(r.digest, 0, Fingerprint.BYTES, r.batch.fingerprints(), r.batch.fingerprintOffset(i),
                    r.batch.fingerprintOffset(i) + Fingerprint.BYTES);
        } catch (RuntimeException e) {
            return false; // does not decode
        }
    }

    private static boolean fingerprintMatches(Reader r, int codec, byte[] data, int off, int len, int rawLength, byte[] fps, int fpOff) {
        try {
            if (rawLength <= 0 || rawLength > FormatVersions.MAX_BLOCK_SIZE) {
                return false;
            }
            r.codec.decode(codec, data, off, len, r.raw, 0, rawLength);
            r.hasher.sha256(r.raw, 0, rawLength, r.digest, 0);
            return Arrays.equals(r.digest, 0, Fingerprint.BYTES, fps, fpOff, fpOff + Fingerprint.BYTES);
        } catch (RuntimeException e) {
            return false; // does not decode
        }
    }

    /** A reader's buffers and codec; the pass that made them closes them. */
    private static final class Reader implements AutoCloseable {
        final BlockBatch batch = new BlockBatch(CHUNK, BATCH_BUFFER_BYTES, FormatVersions.MAX_STORED_BYTES);
        final StoredBlock block = new StoredBlock();
        final BlockCodec codec = new BlockCodec();
        final BlockHasher hasher = new BlockHasher();
        final byte[] raw = new byte[FormatVersions.MAX_BLOCK_SIZE];
        final byte[] digest = new byte[Fingerprint.BYTES];

        @Override
        public void close() {
            codec.close();
        }
    }
}
