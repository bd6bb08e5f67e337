package org.holdfast.bench.workload;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * A server's root file system: a real ext4 image filled with files unpacked from Debian
 * packages, a database file, documents and logs, then changed day by day the way a server
 * changes: packages installed and removed, logs appended, database pages overwritten in place,
 * documents edited (saved as new files, so their unchanged blocks move).
 *
 * <p>The image is loop-mounted when the machine allows it, so that the kernel's ext4 decides
 * where blocks go; otherwise it is changed with {@code debugfs -w} (see {@link DebugfsExt4Editor}
 * for what differs). The package list is fixed; versions come from the Debian mirror of the day
 * and are recorded in {@link #describe()}.
 */
public final class Ext4Workload implements Workload {
    /** How the image is changed. */
    public enum Mode { AUTO, MOUNT, DEBUGFS }

    private static final List<String> FULL_BASE = List.of(
            "openjdk-17-jre-headless", "libllvm15", "postgresql-15",
            "mariadb-server-core", "git", "vim-runtime", "libicu72", "cpp-12", "libperl5.36", "cmake",
            "libgtk-3-common", "libgl1-mesa-dri", "libruby3.1", "libnode108", "libstdc++-12-dev",
            "perl-modules-5.36", "coreutils", "erlang-base", "locales", "gdb", "cmake-data", "systemd",
            "libpython3.11-stdlib", "python3.11-minimal", "bash", "libssl3", "apache2-bin", "php8.2-cli",
            "redis-tools", "libsystemd-shared", "libc6", "util-linux", "libglib2.0-0", "manpages-dev", "strace",
            "zstd", "fonts-dejavu-core");
    private static final List<String> FULL_ADDED = List.of(
            "python3-numpy", "libavcodec59", "libqt5gui5", "libgs10", "python3-django", "libx265-199",
            "nodejs-doc", "mariadb-client-core", "postgresql-client-15", "php8.2-common", "libmagickcore-6.q16-6",
            "tzdata", "git-man", "libpoppler126");
    private static final List<String> QUICK_BASE = List.of(
            "coreutils", "bash", "libssl3", "util-linux", "zstd", "libglib2.0-0", "python3.11-minimal", "strace");
    private static final List<String> QUICK_ADDED = List.of("git-man", "tzdata", "manpages", "libxml2");

    private static final List<String> LOGS = List.of("var/log/syslog", "var/log/auth.log",
            "var/log/nginx/access.log", "var/log/postgresql/postgresql-15-main.log");
    private static final String DATABASE = "var/lib/postgresql/15/main/base/16384/pages.db";
    private static final int PAGE = 8192;

    private final Path dir;
    private final long seed;
    private final WorkloadScale scale;
    private final Mode requestedMode;
    private final DebianPackages packages;
    private final long imageBytes;
    private final int days;
    private final long databaseBytes;
    private final int documentCount;
    private final int documentBytes;
    private final long logBytesPerDay;
    private final int pageWritesPerDay;
    private final int addsPerDay;
    private final SplittableRandom rnd;
    private final List<String> installed = new ArrayList<>();
    private final List<String> removedLog = new ArrayList<>();
    private final List<String> addedLog = new ArrayList<>();
    private final int[] documentVersion;
    private Mode mode;
    private int nextAdd;

    /** Quick: 256 MiB image, 3 days, a few small packages; full: 2 GiB image about three quarters full, 6 days, 37 + 10 packages. */
    public Ext4Workload(Path dir, WorkloadScale scale, long seed, Path cacheDir, Mode mode) throws IOException {
        this(dir, scale, seed, cacheDir, mode, 0);
    }

    /** As above with {@code days} daily states (0: the scale's default). */
    public Ext4Workload(Path dir, WorkloadScale scale, long seed, Path cacheDir, Mode mode, int days) throws IOException {
        this.dir = dir;
        this.seed = seed;
        this.scale = scale;
        this.requestedMode = mode;
        this.packages = new DebianPackages(cacheDir);
        boolean quick = scale == WorkloadScale.QUICK;
        this.imageBytes = quick ? 256L << 20 : 2048L << 20;
        this.days = days > 0 ? days : quick ? 3 : 6;
        this.databaseBytes = quick ? 32L << 20 : 192L << 20;
        this.documentCount = quick ? 100 : 400;
        this.documentBytes = quick ? 160 << 10 : 160 << 10;
        this.logBytesPerDay = quick ? 1L << 20 : 8L << 20;
        this.pageWritesPerDay = quick ? 300 : 2500;
        this.addsPerDay = quick ? 1 : 2;
        this.rnd = new SplittableRandom(BlockContent.key(seed, 77, 1));
        this.documentVersion = new int[documentCount];
    }

    @Override
    public String name() {
        return "ext4";
    }

    @Override
    public int days() {
        return days;
    }

    @Override
    public List<String> volumes() {
        return List.of("server");
    }

    @Override
    public Path image(String volume) {
        return dir.resolve(volume + ".img");
    }

    /** Fetches and unpacks every package this workload will use, so that timing excludes the network. */
    public void prefetch() throws IOException {
        for (String p : base()) {
            packages.tree(p);
        }
        for (String p : added()) {
            packages.tree(p);
        }
    }

    private List<String> base() {
        return scale == WorkloadScale.QUICK ? QUICK_BASE : FULL_BASE;
    }

    private List<String> added() {
        return scale == WorkloadScale.QUICK ? QUICK_ADDED : FULL_ADDED;
    }

    @Override
    public Map<String, Object> describe() {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("imageBytes", imageBytes);
        d.put("days", days);
        d.put("editMode", mode == null ? requestedMode.name().toLowerCase() : mode.name().toLowerCase());
        d.put("databaseBytes", databaseBytes);
        d.put("databasePageWritesPerDay", pageWritesPerDay);
        d.put("documents", documentCount);
        d.put("logBytesPerDay", logBytesPerDay);
        d.put("basePackages", base());
        d.put("packagesAdded", addedLog);
        d.put("packagesRemoved", removedLog);
        d.put("packageVersions", packages.versions());
        d.put("seed", seed);
        return d;
    }

    private Ext4Editor editor() throws IOException {
        if (mode == null) {
            mode = requestedMode;
            if (mode == Mode.AUTO) {
                mode = MountedExt4Editor.available(dir.resolve("probe")) ? Mode.MOUNT : Mode.DEBUGFS;
            }
        }
        if (mode == Mode.MOUNT) {
            return MountedExt4Editor.mount(image("server"), dir.resolve("mnt"));
        }
        return new DebugfsExt4Editor(image("server"), dir.resolve("debugfs-staging"));
    }

    @Override
    public void advance(int day) throws IOException {
        Files.createDirectories(dir);
        if (day == 0) {
            prefetch();
            Ext4Image.format(image("server"), imageBytes, seed);
        }
        try (Ext4Editor ed = editor()) {
            if (day == 0) {
                populate(ed);
            } else {
                change(ed, day);
            }
        }
    }

    private void populate(Ext4Editor ed) throws IOException {
        for (String p : base()) {
            ed.copyTree(packages.tree(p));
            installed.add(p);
        }
        Path db = dir.resolve("pages.db.tmp");
        try (OutputStream out = Files.newOutputStream(db)) {
            byte[] page = new byte[PAGE];
            for (long i = 0; i < databaseBytes / PAGE; i++) {
                fillPage(page, i, 0);
                out.write(page);
            }
        }
        ed.installFile(DATABASE, db);
        Files.delete(db);
        for (int i = 0; i < documentCount; i++) {
            ed.writeFile(documentPath(i), document(i));
        }
        for (String log : LOGS) {
            ed.append(log, logLines(log, 0, logBytesPerDay * 2));
        }
    }

    private void change(Ext4Editor ed, int day) throws IOException {
        // Package churn: one removal (never the first few, a server's core stays), then additions.
        if (installed.size() > 8) {
            String victim = installed.remove(4 + rnd.nextInt(installed.size() - 4));
            ed.delete(packages.files(victim));
            removedLog.add("day " + day + ": " + victim);
        }
        for (int a = 0; a < addsPerDay && nextAdd < added().size(); a++) {
            String p = added().get(nextAdd++);
            ed.copyTree(packages.tree(p));
            installed.add(p);
            addedLog.add("day " + day + ": " + p);
        }
        for (String log : LOGS) {
            ed.append(log, logLines(log, day, logBytesPerDay / LOGS.size()));
        }
        long pagesInDb = databaseBytes / PAGE;
        long[] pages = new long[pageWritesPerDay];
        byte[] data = new byte[pageWritesPerDay * PAGE];
        byte[] page = new byte[PAGE];
        for (int i = 0; i < pages.length; i++) {
            // Hot pages: half of the writes go to the first tenth of the file (indexes, the heap's tail).
            pages[i] = rnd.nextBoolean() ? rnd.nextLong(Math.max(1, pagesInDb / 10)) : rnd.nextLong(pagesInDb);
            fillPage(page, pages[i], day * 100_000L + i);
            System.arraycopy(page, 0, data, i * PAGE, PAGE);
        }
        ed.writePages(DATABASE, PAGE, pages, data);
        int edits = Math.max(1, documentCount / 20);
        for (int e = 0; e < edits; e++) {
            int doc = rnd.nextInt(documentCount);
            documentVersion[doc]++;
            ed.writeFile(documentPath(doc), document(doc));
        }
    }

    private void fillPage(byte[] page, long pageNo, long version) {
        BlockContent.fill(BlockContent.Kind.BINARY, BlockContent.key(seed, pageNo, version), page, 0, PAGE);
        // A page header with its number, as real pages carry.
        for (int b = 0; b < 8; b++) {
            page[b] = (byte) (pageNo >>> (8 * b));
        }
    }

    private static String documentPath(int i) {
        return String.format("srv/www/docs/%02d/doc-%04d.txt", i % 16, i);
    }

    /** A document: text blocks; each version rewrites one block-aligned section of a tenth. */
    private byte[] document(int i) {
        long size = documentBytes / 4 + Math.floorMod(BlockContent.mix(seed ^ i), (long) documentBytes);
        byte[] out = new byte[(int) size];
        int blocks = (int) ((size + BlockContent.BLOCK - 1) / BlockContent.BLOCK);
        int section = Math.max(1, blocks / 10);
        int version = documentVersion[i];
        // Each version edits its own section; earlier edits persist.
        for (int b = 0; b < blocks; b++) {
            int lastEdit = -1;
            for (int v = 1; v <= version; v++) {
                int start = (int) Math.floorMod(BlockContent.key(seed, i, v), (long) blocks);
                if (b >= start && b < start + section) {
                    lastEdit = v;
                }
            }
            int len = (int) Math.min(BlockContent.BLOCK, size - (long) b * BlockContent.BLOCK);
            BlockContent.fill(BlockContent.Kind.TEXT, BlockContent.key(seed ^ 0xd0c, i * 100_000L + b, lastEdit), out,
                    b * BlockContent.BLOCK, len);
        }
        return out;
    }

    private byte[] logLines(String log, int day, long bytes) {
        byte[] out = new byte[(int) bytes];
        long key = BlockContent.key(seed, log.hashCode(), day);
        BlockContent.fill(BlockContent.Kind.TEXT, key, out, 0, out.length);
        // Timestamps make each line unique, as in real logs.
        String stamp = String.format("2026-01-%02dT", 1 + day);
        for (int pos = 0, n = 0; pos + 40 < out.length; pos += 97 + (n % 60), n++) {
            byte[] s = (stamp + String.format("%08d host app[%d]: ", n, n % 977)).getBytes(java.nio.charset.StandardCharsets.US_ASCII);
            System.arraycopy(s, 0, out, pos, Math.min(s.length, out.length - pos));
        }
        return out;
    }
}
