package org.holdfast.server.gc;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.locks.ReentrantLock;
import org.holdfast.common.kill.KillPoints;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.gc.bosc.BoscSettings;
import org.holdfast.gc.bosc.UpdateBatch;
import org.holdfast.gc.gma.GcMetadataArray;
import org.holdfast.gc.gma.GmaChunk;
import org.holdfast.gc.gma.GmaFormat;
import org.holdfast.common.id.PbnRange;
import org.holdfast.gc.gma.GmaLayout;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.LocationIndex;

/**
 * Rebuilds a stopped server's GC metadata ({@code gc/}: GMA, BOSC log, checkpoint) from the catalog,
 * which is the source of truth, for when that directory was lost or damaged.
 *
 * <h2>What each PBN gets (the rule the incremental bookkeeping follows)</h2>
 * A volume's map entry (lbn, birth b, pbn) replaced by the next newer entry of the same LBN at
 * b' is read by the snapshots b..b'−1; the newest entry of an LBN is read by the newest snapshot.
 * <ul>
 * <li>RC = number of newest entries mapping the PBN, over every volume that still has snapshots
 *     (a commit adds 1 for each new entry and takes 1 from the one it replaces; a volume whose
 *     snapshots are gone is being deleted and was released already);</li>
 * <li>ET = max over the replaced entries of the latest expiry among the retained snapshots in
 *     b..b'−1 ({@link org.holdfast.gc.retention.RangeMaxExpiry}, correction 2; as a commit computes it);</li>
 * <li>pins = over the entries of the PBN, the number of snapshots reading it that are held, plus the
 *     number that are keep-last pinned (each of the two is its own pin operation, adding 1 per mapped
 *     LBN of its snapshot);</li>
 * <li>every stored PBN with RC 0 gets ET ≥ now + grace: the rebuild cannot know what a backup in
 *     flight when the metadata was lost had written or matched, so no block is freed sooner than
 *     the grace after a rebuild. Stored blocks nothing references are swept after that.</li>
 * </ul>
 * The counting is {@link CatalogCounts} (shared with {@link WorkerGcExport}, which counts a worker's range).
 * The operation counter of the catalog is carried into the new log (one empty group), so a start
 * re-drives nothing: the catalog's state already includes every operation.
 *
 * <h2>Crash safety</h2>
 * Everything is built in {@code gc.rebuild/} (deleted first if an earlier run left it), then read
 * back and verified (digest of every slot, operation id), then swapped in: the old {@code gc/} is
 * renamed to {@code gc.replaced-<time>/}, the new one to {@code gc/}, each rename followed by a
 * directory fsync. A crash before the swap leaves {@code gc/} as it was; a crash between the two
 * renames leaves no {@code gc/} (the server refuses to start); either way re-running the rebuild
 * finishes the job.
 *
 * <h2>Cost</h2>
 * Memory is bounded by {@link Settings#passChunks} (17 bytes per PBN of one pass); each pass reads
 * every volume's map and the location index once, so a store with more PBNs than a pass holds is
 * read several times.
 */
public final class GcMetadataRebuild {
    /** Name of the directory the rebuild is built in, next to {@code gc/}. */
    public static final String BUILD_DIR = GcDirectorySwap.BUILD_DIR;
    /** Prefix of the directory the replaced {@code gc/} is moved to. */
    public static final String REPLACED_PREFIX = GcDirectorySwap.REPLACED_PREFIX;
    private static final byte REFERENCED = CatalogCounts.REFERENCED;
    private static final byte STORED = 2;

    /**
     * Settings. {@code grace}: the server's {@code holdfast.gc.grace}; {@code passChunks}: GMA chunks
     * (8191 PBNs each) rebuilt per pass over the catalog.
     */
    public record Settings(Duration grace, int passChunks) {
        public Settings {
            if (grace.isNegative() || grace.isZero()) {
                throw new IllegalArgumentException("grace must be positive: " + grace);
            }
            if (passChunks < 1 || passChunks > 1 << 16) {
                throw new IllegalArgumentException("passChunks must be 1..65536: " + passChunks);
            }
        }

        /** The server's default grace (24 h) and 512 chunks (about 4 M PBNs, 70 MiB) per pass. */
        public static Settings defaults() {
            return new Settings(Duration.ofHours(24), 512);
        }
    }

    /** Receives progress lines (phase changes, volumes scanned, chunks written). */
    @FunctionalInterface
    public interface Progress {
        void step(String line);
    }

    /** What a rebuild did. */
    public record Report(int volumes, int snapshots, long mapEntries, long referencedPbns, long storedPbns,
                         long unreferencedStored, long referencedMissing, long pinnedPbns, long chunksWritten,
                         int passes, long lastOpId, long graceUntil, String replacedDir, long millis) {
    }

    private final Path root;
    private final Catalog catalog;
    private final Settings settings;
    private final Clock clock;
    private final Progress progress;
    /** The GMA layout of the store the catalog belongs to (its PBN range). */
    private final GmaLayout layout;
    /** The PBNs counted: the layout's, or on a master with data=workers its own range below the workers'. */
    private final GmaLayout counted;

    /**
     * @param root    the data directory (the caller holds its lock, so no server runs on it)
     * @param catalog the catalog opened on {@code root/catalog}
     */
    public GcMetadataRebuild(Path root, Catalog catalog, Settings settings, Clock clock, Progress progress) {
        this(root, catalog, settings, clock, progress, DataStore.storedRange(catalog.db()).limit());
    }

    /**
     * As above, counting only the PBNs below {@code countedLimit}: on a master with data=workers the
     * catalog's PBNs are the workers' (their counts are rebuilt on them), and its own GMA, over every
     * PBN from 1, holds none of them; counting them would pass over 2^48 empty PBNs.
     */
    public GcMetadataRebuild(Path root, Catalog catalog, Settings settings, Clock clock, Progress progress, long countedLimit) {
        this.root = root;
        this.catalog = catalog;
        this.settings = settings;
        this.clock = clock;
        this.progress = progress;
        this.layout = new GmaLayout(DataStore.storedRange(catalog.db()));
        this.counted = new GmaLayout(new PbnRange(layout.range().first(), Math.min(layout.range().limit(), countedLimit)));
    }

    /** Rebuilds, verifies and swaps in the GC directory. */
    public Report run() {
        long started = System.nanoTime();
        long now = clock.millis();
        long graceUntil = now + settings.grace().toMillis();
        GcDirectorySwap dirs = new GcDirectorySwap(root, "gc-rebuild");
        Path build = dirs.freshBuild();
        CatalogCounts counts = new CatalogCounts(catalog, counted, progress);
        long lastOpId = catalog.db().metaLong(GcRecords.NEXT_OP_ID, 1) - 1;
        Counts n = new Counts();
        GmaEntryDigest written = new GmaEntryDigest();
        long passPbns = (long) settings.passChunks() * GmaFormat.PBNS_PER_CHUNK;
        long limit = layout.base() + 1; // one past the highest PBN seen, known after the first pass
        int passes = 0;
        try (GcMetadataArray gma = GcMetadataArray.open(build, 16, layout.range())) {
            // passes start at the layout's base, so each pass covers whole chunks
            for (long lo = layout.base(); lo < limit; lo += passPbns) {
                passes++;
                long hi = lo + passPbns;
                progress.step("pass " + passes + ": PBNs " + lo + ".." + (hi - 1));
                CatalogCounts.Pass p = new CatalogCounts.Pass(lo, (int) passPbns);
                limit = Math.max(limit, counts.scan(p));
                n.totalMapEntries = counts.mapEntries();
                limit = Math.max(limit, scanLocations(p));
                writeChunks(gma, p, graceUntil, n, written);
                gma.sync(); // per pass: the GMA's double-write journal holds one pass, not the whole file
            }
        }
        KillPoints.hit(KillPoints.GC_REBUILD_BEFORE_VERIFY);
        writeLog(build, lastOpId);
        progress.step("verifying " + build);
        verify(build, lastOpId, written);
        dirs.forceTree(build);
        progress.step("swapping " + build + " in as " + root.resolve("gc"));
        String replaced = dirs.swap(build, root.resolve("gc"), clock);
        long millis = (System.nanoTime() - started) / 1_000_000;
        return new Report(counts.volumes(), counts.snapshots(), n.totalMapEntries, n.referenced, n.stored, n.unreferencedStored,
                n.referencedMissing, n.pinned, n.chunks, passes, lastOpId, graceUntil, replaced, millis);
    }

    private static final class Counts {
        long totalMapEntries;
        long referenced;
        long stored;
        long unreferencedStored;
        long referencedMissing;
        long pinned;
        long chunks;
    }

    private long scanLocations(CatalogCounts.Pass p) {
        long[] max = {0};
        new LocationIndex(catalog.db()).forEach((pbn, logId, offset, storedLength, fps, fpOff) -> {
            if (!counted.holds(pbn)) {
                return true;
            }
            max[0] = Math.max(max[0], pbn + 1);
            int s = p.slot(pbn);
            if (s >= 0) {
                p.flags[s] |= STORED;
            }
            return true;
        });
        return max[0];
    }

    private void writeChunks(GcMetadataArray gma, CatalogCounts.Pass p, long graceUntil, Counts n, GmaEntryDigest written) {
        int chunks = (p.rc.length + GmaFormat.PBNS_PER_CHUNK - 1) / GmaFormat.PBNS_PER_CHUNK;
        long firstChunk = gma.layout().chunkOf(p.lo);
        for (int ci = 0; ci < chunks; ci++) {
            long chunk = firstChunk + ci;
            int base = ci * GmaFormat.PBNS_PER_CHUNK;
            boolean any = false;
            for (int k = 0; k < GmaFormat.PBNS_PER_CHUNK && !any; k++) {
                any = p.flags[base + k] != 0;
            }
            if (!any) {
                continue;
            }
            ReentrantLock l = gma.lock(chunk);
            l.lock();
            try {
                GmaChunk c = gma.load(chunk);
                for (int k = 0; k < GmaFormat.PBNS_PER_CHUNK; k++) {
                    int s = base + k;
                    byte f = p.flags[s];
                    if (f == 0) {
                        continue;
                    }
                    long pbn = p.lo + s;
                    long et = p.et[s];
                    if ((f & STORED) != 0) {
                        n.stored++;
                        if (p.rc[s] == 0) {
                            et = Math.max(et, graceUntil);
                        }
                        if ((f & REFERENCED) == 0) {
                            n.unreferencedStored++;
                        }
                    } else {
                        n.referencedMissing++; // fsck reports it as missing: the rebuild cannot bring it back
                    }
                    if ((f & REFERENCED) != 0) {
                        n.referenced++;
                    }
                    if (p.pins[s] > 0) {
                        n.pinned++;
                    }
                    int slot = gma.layout().slotOf(pbn);
                    c.addRc(slot, p.rc[s]);
                    c.addPins(slot, p.pins[s]);
                    c.raiseExpiry(slot, et);
                    written.add(pbn, c.rc(slot), c.pins(slot), c.expiry(slot));
                }
                gma.write(c);
                n.chunks++;
            } finally {
                l.unlock();
            }
            KillPoints.hit(KillPoints.GC_REBUILD_AFTER_CHUNK);
        }
        progress.step("  wrote " + n.chunks + " GMA chunks so far");
    }

    /** Starts the new log and checkpoint through the real pipeline, marking the catalog's last operation as logged. */
    private void writeLog(Path build, long lastOpId) {
        try (BoscPipeline pipeline = BoscPipeline.open(build, BoscSettings.defaults().withCommitters(1), layout.range())) {
            if (lastOpId > 0) {
                pipeline.appendGroup(lastOpId, new UpdateBatch(0));
            }
            pipeline.awaitDurable();
        }
    }

    /** Reopens the built directory as a server would and compares every slot with what was written. */
    private void verify(Path build, long lastOpId, GmaEntryDigest written) {
        GmaEntryDigest back;
        try (BoscPipeline pipeline = BoscPipeline.open(build, BoscSettings.defaults().withCommitters(1), layout.range())) {
            if (pipeline.openedEmpty() || pipeline.lastOpId() != lastOpId) {
                throw new IllegalStateException("verification of " + build + " failed: it opens as "
                        + (pipeline.openedEmpty() ? "empty" : "logged up to operation " + pipeline.lastOpId())
                        + ", expected operation " + lastOpId);
            }
            back = GmaEntryDigest.readBack(pipeline);
        }
        if (!back.sameAs(written)) {
            throw new IllegalStateException("verification of " + build + " failed: read back " + back.entries()
                    + " GMA entries, wrote " + written.entries() + ", or their contents differ; nothing was swapped in");
        }
    }
}
