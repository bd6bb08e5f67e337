package org.holdfast.bench.workload;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Desktop hosts of a workgroup, modelled on the thesis' workgroup trace (chapter 6.1.1): every
 * host was cloned from one OS image, holds the file-type mix of table 6.1, and changes about
 * 1.5 % of its volume a day.
 *
 * <p>How each type changes at the block level follows the table's conjectures. Logs append (and
 * wrap around when full). Mail stores and databases are overwritten in place. Documents, system
 * files and media are overwritten the way applications do it: a new version is written to newly
 * allocated blocks and the old ones are freed but keep their stale bytes. A new version of a
 * document repeats most of the old one's blocks at new addresses, which is the duplication a
 * block-level dedup engine must find. System updates are the same on every host on the same day,
 * and installers and some media files come from shared catalogues: those are duplicates across
 * hosts. Day 0 places the shared OS files at the same addresses on every host, as a clone would.
 */
public final class TraceWorkload implements Workload {
    private static final double USED_FRACTION = 0.70;
    private static final double DAILY_CHANGE = 0.015;
    private static final double HOST_SPECIFIC_SYSTEM = 0.03;
    private static final int CATALOGUE = 64;

    private final Path dir;
    private final long seed;
    private final int hostCount;
    private final long volumeBytes;
    private final int days;
    private final List<Host> hosts = new ArrayList<>();

    /** A workload under {@code dir}; quick: 3 hosts x 32 MiB x 3 days, full: 8 hosts x 256 MiB x 6 days. */
    public TraceWorkload(Path dir, WorkloadScale scale, long seed) {
        this(dir, scale, seed, 0, 0);
    }

    /** As above with explicit host and day counts (0: the scale's default). */
    public TraceWorkload(Path dir, WorkloadScale scale, long seed, int hosts, int days) {
        this(dir, seed, hosts > 0 ? hosts : scale == WorkloadScale.QUICK ? 3 : 8,
                scale == WorkloadScale.QUICK ? 32L << 20 : 256L << 20, days > 0 ? days : scale == WorkloadScale.QUICK ? 3 : 6);
    }

    /** A workload of explicit size (tests use tiny ones). */
    public TraceWorkload(Path dir, long seed, int hostCount, long volumeBytes, int days) {
        this.dir = dir;
        this.seed = seed;
        this.hostCount = hostCount;
        this.volumeBytes = volumeBytes;
        this.days = days;
    }

    @Override
    public String name() {
        return "trace";
    }

    @Override
    public int days() {
        return days;
    }

    @Override
    public List<String> volumes() {
        List<String> names = new ArrayList<>();
        for (int h = 0; h < hostCount; h++) {
            names.add(hostName(h));
        }
        return names;
    }

    private static String hostName(int h) {
        return String.format("host-%02d", h + 1);
    }

    @Override
    public Path image(String volume) {
        return dir.resolve(volume + ".img");
    }

    @Override
    public Map<String, Object> describe() {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("model", "thesis 6.1.1 workgroup trace, table 6.1 file-type mix without VM files");
        d.put("hosts", hostCount);
        d.put("volumeBytes", volumeBytes);
        d.put("days", days);
        d.put("usedFraction", USED_FRACTION);
        d.put("targetDailyChange", DAILY_CHANGE);
        d.put("seed", seed);
        Map<String, Double> shares = new LinkedHashMap<>();
        for (TraceFileType t : TraceFileType.values()) {
            shares.put(t.name().toLowerCase(), t.share);
        }
        d.put("tableShares", shares);
        return d;
    }

    @Override
    public void advance(int day) throws IOException {
        if (day == 0) {
            for (int h = 0; h < hostCount; h++) {
                Host host = new Host(h, VolumeImage.create(image(hostName(h)), volumeBytes));
                hosts.add(host);
                host.populate();
                host.image.flush();
            }
            return;
        }
        if (hosts.isEmpty()) {
            throw new IllegalStateException("advance(0) must come first");
        }
        for (Host host : hosts) {
            host.change(day);
            host.image.flush();
        }
    }

    @Override
    public void close() throws IOException {
        for (Host h : hosts) {
            h.image.close();
        }
        hosts.clear();
    }

    private long targetBytes(TraceFileType t) {
        return (long) (volumeBytes * USED_FRACTION * t.share / TraceFileType.TOTAL_SHARE);
    }

    private long blocksFor(long bytes) {
        return Math.max(1, (bytes + BlockContent.BLOCK - 1) / BlockContent.BLOCK);
    }

    /** A file size in [min, max] drawn from r, with max capped so that many files fit in a volume. */
    private long sizeOf(TraceFileType t, long r) {
        long max = Math.max(t.minBytes, Math.min(t.maxBytes, volumeBytes / 24));
        long span = max - t.minBytes;
        // Skewed towards small files, as file systems are.
        double u = (double) ((r >>> 11) & ((1L << 53) - 1)) / (1L << 53);
        return t.minBytes + (long) (span * u * u);
    }

    /** One simulated host with its image, allocator and files. */
    private final class Host {
        final int index;
        final VolumeImage image;
        final ExtentAllocator alloc;
        final SplittableRandom rnd;
        final List<TraceFile> system = new ArrayList<>();
        int sharedSystem;
        final List<TraceFile> media = new ArrayList<>();
        final List<TraceFile> documents = new ArrayList<>();
        final List<TraceFile> installers = new ArrayList<>();
        final List<TraceFile> logs = new ArrayList<>();
        final List<TraceFile> mail = new ArrayList<>();
        final List<TraceFile> databases = new ArrayList<>();
        long uniqueCounter;
        /** Bytes written beyond each category's allowance so far: whole files overshoot, later days make up. */
        final long[] overshoot = new long[3];

        Host(int index, VolumeImage image) {
            this.index = index;
            this.image = image;
            this.alloc = new ExtentAllocator(0, image.blocks());
            this.rnd = new SplittableRandom(BlockContent.key(seed, index, 1));
        }

        long uniqueSeed(TraceFileType t) {
            return BlockContent.key(seed, 1000 + index, (uniqueCounter++ << 4) | t.ordinal());
        }

        long catalogueSeed(TraceFileType t, int i) {
            return BlockContent.key(seed, 2000 + t.ordinal(), i);
        }

        boolean place(TraceFile f, int day) throws IOException {
            List<Extent> got = alloc.allocate(f.blocks());
            if (got.isEmpty()) {
                return false;
            }
            f.extents = got;
            f.write(image, 0, f.blocks());
            return true;
        }

        TraceFile newFile(TraceFileType t, long fileSeed, long bytes, int day) {
            return new TraceFile(t, fileSeed, blocksFor(bytes), day);
        }

        void populate() throws IOException {
            // The OS image: same files, same order, same addresses on every host.
            SplittableRandom os = new SplittableRandom(BlockContent.key(seed, 7, 7));
            long sys = 0;
            long sysShared = (long) (targetBytes(TraceFileType.SYSTEM) * (1 - HOST_SPECIFIC_SYSTEM));
            int n = 0;
            while (sys < sysShared) {
                long s = sizeOf(TraceFileType.SYSTEM, os.nextLong());
                TraceFile f = newFile(TraceFileType.SYSTEM, BlockContent.key(seed, 3000, n++), s, 0);
                if (!place(f, 0)) {
                    break;
                }
                system.add(f);
                sys += f.length;
            }
            sharedSystem = system.size();
            List<TraceFile> rest = new ArrayList<>();
            // Host-specific configuration and registry files.
            fill(rest, TraceFileType.SYSTEM, targetBytes(TraceFileType.SYSTEM) - sys, 0.0);
            fill(rest, TraceFileType.INSTALL_MEDIA, targetBytes(TraceFileType.INSTALL_MEDIA), 1.0);
            fill(rest, TraceFileType.MULTIMEDIA, targetBytes(TraceFileType.MULTIMEDIA), 0.2);
            fill(rest, TraceFileType.DOCUMENT, targetBytes(TraceFileType.DOCUMENT), 0.1);
            rest.add(newFile(TraceFileType.MAIL, uniqueSeed(TraceFileType.MAIL), targetBytes(TraceFileType.MAIL), 0));
            rest.add(newFile(TraceFileType.DATABASE, uniqueSeed(TraceFileType.DATABASE),
                    targetBytes(TraceFileType.DATABASE), 0));
            long logCap = Math.max(BlockContent.BLOCK, targetBytes(TraceFileType.LOG) / 4);
            for (int i = 0; i < 4; i++) {
                TraceFile log = newFile(TraceFileType.LOG, uniqueSeed(TraceFileType.LOG), logCap, 0);
                log.length = (long) (log.blocks() * (long) BlockContent.BLOCK * (0.3 + 0.4 * rnd.nextDouble()));
                rest.add(log);
            }
            // Files arrive in a host-specific order after the clone.
            for (int i = rest.size() - 1; i > 0; i--) {
                int j = rnd.nextInt(i + 1);
                TraceFile t = rest.get(i);
                rest.set(i, rest.get(j));
                rest.set(j, t);
            }
            for (TraceFile f : rest) {
                if (place(f, 0)) {
                    listOf(f.type).add(f);
                }
            }
        }

        void fill(List<TraceFile> out, TraceFileType t, long bytes, double sharedFraction) {
            long sum = 0;
            while (sum < bytes) {
                out.add(pick(t, sharedFraction, 0));
                sum += out.get(out.size() - 1).length;
            }
        }

        /** A new file of type t: from the shared catalogue with probability sharedFraction. */
        TraceFile pick(TraceFileType t, double sharedFraction, int day) {
            if (rnd.nextDouble() < sharedFraction) {
                int i = rnd.nextInt(CATALOGUE);
                long s = catalogueSeed(t, i);
                return newFile(t, s, sizeOf(t, BlockContent.mix(s)), day);
            }
            long s = uniqueSeed(t);
            return newFile(t, s, sizeOf(t, BlockContent.mix(s)), day);
        }

        List<TraceFile> listOf(TraceFileType t) {
            return switch (t) {
                case MULTIMEDIA -> media;
                case SYSTEM -> system;
                case DOCUMENT -> documents;
                case INSTALL_MEDIA -> installers;
                case LOG -> logs;
                case MAIL -> mail;
                case DATABASE -> databases;
            };
        }

        void change(int day) throws IOException {
            long budget = (long) (volumeBytes * DAILY_CHANGE);
            overshoot[0] = systemUpdate(day, budget * 20 / 100 - overshoot[0]);
            overshoot[1] = editDocuments(day, budget * 25 / 100 - overshoot[1]);
            overshoot[2] = newMedia(day, budget * 20 / 100 - overshoot[2]);
            newInstaller(day);
            appendLogs(budget * 10 / 100);
            overwriteInPlace(mail, budget * 10 / 100, 1);
            overwriteInPlace(databases, budget * 10 / 100, 2);
        }

        /** The same patch on every host: the day's random choice is global, not per host. */
        long systemUpdate(int day, long bytes) throws IOException {
            SplittableRandom patch = new SplittableRandom(BlockContent.key(seed, 4000, day));
            long done = 0;
            int guard = 0;
            while (done < bytes && sharedSystem > 0 && guard++ < 10_000) {
                TraceFile f = system.get(patch.nextInt(sharedSystem));
                for (int b = 0; b < f.blocks(); b++) {
                    f.generation[b]++;
                }
                if (!relocate(f)) {
                    break;
                }
                done += f.length;
            }
            return done - bytes;
        }

        long editDocuments(int day, long bytes) throws IOException {
            long done = 0;
            int guard = 0;
            while (done < bytes && guard++ < 10_000) {
                if (documents.isEmpty() || rnd.nextInt(5) == 0) {
                    TraceFile f = pick(TraceFileType.DOCUMENT, 0.0, day);
                    makeRoom(f.blocks());
                    if (!place(f, day)) {
                        break;
                    }
                    documents.add(f);
                    done += f.length;
                    continue;
                }
                TraceFile f = documents.get(rnd.nextInt(documents.size()));
                // An edit touches a run of blocks and the tail; saving writes the whole new
                // version elsewhere, so the untouched blocks reappear as duplicates.
                int run = Math.max(1, f.blocks() / 5);
                int start = rnd.nextInt(f.blocks());
                for (int b = start; b < Math.min(f.blocks(), start + run); b++) {
                    f.generation[b]++;
                }
                f.generation[f.blocks() - 1]++;
                if (!relocate(f)) {
                    break;
                }
                done += f.length;
            }
            return done - bytes;
        }

        long newMedia(int day, long bytes) throws IOException {
            long done = 0;
            int guard = 0;
            while (done < bytes && guard++ < 10_000) {
                TraceFile f = pick(TraceFileType.MULTIMEDIA, 0.3, day);
                makeRoom(f.blocks());
                if (!place(f, day)) {
                    break;
                }
                media.add(f);
                done += f.length;
            }
            return done - bytes;
        }

        /** Every other day a new installer appears in the catalogue; half of the hosts fetch it. */
        void newInstaller(int day) throws IOException {
            if (day % 2 != 0 || !rnd.nextBoolean()) {
                return;
            }
            long s = catalogueSeed(TraceFileType.INSTALL_MEDIA, CATALOGUE + day);
            // A download of the day stays within a quarter of the day's change budget.
            long size = Math.min(sizeOf(TraceFileType.INSTALL_MEDIA, BlockContent.mix(s)),
                    (long) (volumeBytes * DAILY_CHANGE / 4));
            TraceFile f = newFile(TraceFileType.INSTALL_MEDIA, s, size, day);
            makeRoom(f.blocks());
            if (place(f, day)) {
                installers.add(f);
            }
        }

        void appendLogs(long bytes) throws IOException {
            if (logs.isEmpty()) {
                return;
            }
            long each = Math.max(1, bytes / logs.size());
            for (TraceFile log : logs) {
                long cap = (long) log.blocks() * BlockContent.BLOCK;
                long add = each / 2 + rnd.nextLong(each + 1);
                long from = log.length;
                if (from + add > cap) {
                    // Wrap-around: the log restarts at its first block.
                    for (int b = 0; b < log.blocks(); b++) {
                        log.generation[b]++;
                    }
                    from = 0;
                    add = Math.min(add, cap);
                }
                log.length = from + add;
                log.write(image, (int) (from / BlockContent.BLOCK),
                        (int) ((log.length + BlockContent.BLOCK - 1) / BlockContent.BLOCK));
            }
        }

        void overwriteInPlace(List<TraceFile> files, long bytes, int pageBlocks) throws IOException {
            if (files.isEmpty()) {
                return;
            }
            long pages = Math.max(1, bytes / ((long) pageBlocks * BlockContent.BLOCK));
            for (long p = 0; p < pages; p++) {
                TraceFile f = files.get(rnd.nextInt(files.size()));
                int first = rnd.nextInt(Math.max(1, f.blocks() - pageBlocks + 1));
                int last = Math.min(f.blocks(), first + pageBlocks);
                for (int b = first; b < last; b++) {
                    f.generation[b]++;
                }
                f.write(image, first, last);
            }
        }

        /** Writes the file's current version to newly allocated blocks and frees the old ones. */
        boolean relocate(TraceFile f) throws IOException {
            makeRoom(f.blocks());
            List<Extent> old = f.extents;
            List<Extent> got = alloc.allocate(f.blocks());
            if (got.isEmpty()) {
                return false;
            }
            f.extents = got;
            f.write(image, 0, f.blocks());
            alloc.release(old);
            return true;
        }

        /** Deletes the oldest media files while free space is short, as users clean up. */
        void makeRoom(long blocks) {
            long reserve = image.blocks() / 20;
            while (alloc.freeBlocks() < blocks + reserve && !media.isEmpty()) {
                TraceFile victim = media.remove(0);
                alloc.release(victim.extents);
            }
        }
    }
}
