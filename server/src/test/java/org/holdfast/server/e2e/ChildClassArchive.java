package org.holdfast.server.e2e;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import java.util.zip.Deflater;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;

/**
 * A class-data-sharing (AppCDS) archive per child class path: a child JVM maps the classes of
 * Spring, Tomcat, Netty, Jackson and the rest from one file instead of reading, parsing and linking
 * them from their jars, which is much of a server start's CPU (a quarter less CPU per start here, a third less for an agent).
 *
 * <p>How, on JDK 17: a dynamic archive holds classes from jar files only, and the JVM refuses to
 * write one at all with a non-empty directory on the class path. So each directory of the child's
 * class path ({@code target/classes}, {@code target/test-classes}) is packed into a jar named by its
 * content, once per build. The first child of a class path then trains the archive: a run of its
 * {@link ChildClasspath} training main with {@code -XX:ArchiveClassesAtExit}, under a file lock, so
 * the build's test JVMs train it once; while one trains, the other starts its children without an
 * archive. The archive's name covers the JDK, the default JVM options and every class path entry
 * with its size and time (the JVM refuses an archive whose jars changed), so a build that changed
 * classes trains anew; one that only wrote a new build time does not ({@link #VOLATILE}).
 *
 * <p>Children get {@code -Xlog:cds*=off}: a JVM that cannot map the archive starts without it and
 * prints nothing about it on stdout, which the agent tests parse. A failed training is reported
 * once and leaves the children without an archive (slower, never wrong). Off without the
 * {@value #PROPERTY} system property (the build sets it to {@code target/child-cds}).
 */
final class ChildClassArchive {
    static final String PROPERTY = "holdfast.e2e.child-cds-dir";
    private static final Path DIR = dirFromProperty();
    /**
     * Files a build rewrites each time with new content (the build time): they go into a jar of their
     * own at the end of the class path, which holds no class, so the JVM does not check it against
     * the archive and a new build time keeps the archive.
     */
    private static final Set<String> VOLATILE = Set.of("META-INF/build-info.properties");
    /** Jars per class directory (its classes, and its volatile files or none), once per test JVM. */
    private static final Map<String, List<Path>> JARS = new ConcurrentHashMap<>();

    private ChildClassArchive() {
    }

    /** The class path and JVM options of a child: with the directories as jars and, once trained, the archive. */
    record Prepared(List<String> classpath, List<String> jvmOptions) {
    }

    /** A child class path as jars: {@code archived} (what the archive covers), then {@code tail} (volatile files only). */
    private record Jarred(List<String> archived, List<String> tail) {
        List<String> classpath() {
            List<String> all = new ArrayList<>(archived);
            all.addAll(tail);
            return all;
        }
    }

    private static Path dirFromProperty() {
        String dir = System.getProperty(PROPERTY, "").trim();
        return dir.isEmpty() ? null : Path.of(dir).toAbsolutePath();
    }

    /** Whether children get an archive at all (the build sets {@value #PROPERTY}). */
    static boolean enabled() {
        return DIR != null;
    }

    /** The archive a child of {@code kind} with these class path entries maps (null if off or untrained). */
    static Path archiveFor(ChildClasspath kind, List<String> entries, List<String> defaultOptions) {
        if (DIR == null) {
            return null;
        }
        try {
            Path archive = archivePath(kind, jarred(entries).archived(), defaultOptions);
            return Files.exists(archive) ? archive : null;
        } catch (IOException e) {
            return null;
        }
    }

    /**
     * The child's class path and the options that make it map its archive; trains the archive first
     * if this is the first child of the class path in the build (synchronized: the parallel starts of
     * one test wait for the one training, then all map it).
     */
    static synchronized Prepared prepare(ChildClasspath kind, List<String> entries, List<String> defaultOptions) {
        if (DIR == null) {
            return new Prepared(entries, List.of());
        }
        Jarred jarred;
        try {
            jarred = jarred(entries);
        } catch (IOException | UncheckedIOException e) {
            System.out.println("[e2e] cannot pack the child class path's directories into jars (" + e
                    + "): children start from the directories, without a class-data-sharing archive");
            return new Prepared(entries, List.of());
        }
        try {
            Path archive = archivePath(kind, jarred.archived(), defaultOptions);
            if (!Files.exists(archive) && !Files.exists(failedMarker(archive))) {
                train(kind, jarred.classpath(), defaultOptions, archive);
            }
            if (Files.exists(archive)) {
                return new Prepared(jarred.classpath(), List.of("-XX:SharedArchiveFile=" + archive, "-Xlog:cds*=off"));
            }
        } catch (IOException | UncheckedIOException e) {
            System.out.println("[e2e] class-data-sharing archive for " + kind.name() + " children not trained (" + e
                    + "): they start without one");
        }
        return new Prepared(jarred.classpath(), List.of());
    }

    /** {@code entries} with each non-empty directory replaced by its jar, and the jars of volatile files last. */
    private static Jarred jarred(List<String> entries) throws IOException {
        List<String> out = new ArrayList<>();
        List<String> tail = new ArrayList<>();
        for (String e : entries) {
            Path p = Path.of(e);
            if (Files.isDirectory(p) && !isEmpty(p)) {
                List<Path> jars = JARS.get(e);
                if (jars == null) {
                    jars = jarsOf(p);
                    JARS.put(e, jars);
                }
                out.add(jars.get(0).toString());
                jars.stream().skip(1).forEach(j -> tail.add(j.toString()));
            } else {
                out.add(e);
            }
        }
        return new Jarred(out, tail);
    }

    /** The jar of {@code dir}'s files but the volatile ones, then the jar of those if it has any. */
    private static List<Path> jarsOf(Path dir) throws IOException {
        List<Path> all;
        try (Stream<Path> s = Files.walk(dir)) {
            all = s.filter(f -> !f.equals(dir)).sorted(Comparator.comparing(f -> entryName(dir, f))).toList();
        }
        List<Path> volatileFiles = all.stream().filter(f -> VOLATILE.contains(entryName(dir, f))).toList();
        List<Path> jars = new ArrayList<>();
        jars.add(jarOf(dir, all.stream().filter(f -> !volatileFiles.contains(f)).toList(), ""));
        if (!volatileFiles.isEmpty()) {
            List<Path> withParents = new ArrayList<>();
            for (Path f : volatileFiles) {
                for (Path up = f.getParent(); !up.equals(dir); up = up.getParent()) {
                    if (!withParents.contains(up)) {
                        withParents.add(up);
                    }
                }
                withParents.add(f);
            }
            withParents.sort(Comparator.comparing(f -> entryName(dir, f)));
            jars.add(jarOf(dir, withParents, "-volatile"));
        }
        return jars;
    }

    private static String entryName(Path dir, Path f) {
        return dir.relativize(f).toString().replace(File.separatorChar, '/');
    }

    private static boolean isEmpty(Path dir) throws IOException {
        try (DirectoryStream<Path> s = Files.newDirectoryStream(dir)) {
            return !s.iterator().hasNext();
        }
    }

    /**
     * The jar of {@code files} (of {@code dir}, directories included), named by their paths and
     * contents; written once (under a file lock shared with the build's other test JVMs) and never
     * rewritten, since the archives trained on it check its size and time.
     */
    private static Path jarOf(Path dir, List<Path> files, String suffix) throws IOException {
        MessageDigest d = sha256();
        d.update(dir.toAbsolutePath().toString().getBytes(StandardCharsets.UTF_8));
        for (Path f : files) {
            if (Files.isRegularFile(f)) {
                // content, not times: each Maven run copies the resources again, and an unchanged jar keeps its archive
                d.update((entryName(dir, f) + "\0" + Files.size(f) + "\n").getBytes(StandardCharsets.UTF_8));
                d.update(Files.readAllBytes(f));
            }
        }
        String parent = dir.getParent() == null || dir.getParent().getParent() == null ? "root"
                : dir.getParent().getParent().getFileName().toString();
        Path jars = Files.createDirectories(DIR.resolve("jars"));
        Path jar = jars.resolve(parent + "-" + dir.getFileName() + suffix + "-" + hex(d.digest()) + ".jar");
        if (Files.exists(jar)) {
            return jar;
        }
        try (FileChannel ch = FileChannel.open(jars.resolve("lock"), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
             FileLock ignored = ch.lock()) {
            if (!Files.exists(jar)) {
                Path tmp = Files.createTempFile(jars, jar.getFileName().toString(), ".tmp");
                try (OutputStream out = Files.newOutputStream(tmp); ZipOutputStream zip = new ZipOutputStream(out)) {
                    zip.setLevel(Deflater.BEST_SPEED);
                    for (Path f : files) {
                        String name = entryName(dir, f);
                        // directory entries too: Spring's component scan finds a package in a jar by its entry
                        boolean isDir = Files.isDirectory(f);
                        ZipEntry entry = new ZipEntry(isDir ? name + "/" : name);
                        entry.setLastModifiedTime(Files.getLastModifiedTime(f));
                        zip.putNextEntry(entry);
                        if (!isDir) {
                            Files.copy(f, zip);
                        }
                        zip.closeEntry();
                    }
                }
                Files.move(tmp, jar, StandardCopyOption.ATOMIC_MOVE);
            }
        }
        return jar;
    }

    private static Path archivePath(ChildClasspath kind, List<String> classpath, List<String> defaultOptions) throws IOException {
        MessageDigest d = sha256();
        d.update((System.getProperty("java.home") + "\0" + System.getProperty("java.vm.version") + "\0" + kind.name() + "\0"
                + kind.trainingMain() + "\0" + String.join(" ", defaultOptions) + "\0" + String.join(" ", kind.trainingJvmOptions()) + "\n")
                .getBytes(StandardCharsets.UTF_8));
        for (String e : classpath) {
            Path p = Path.of(e);
            String stamp = Files.isRegularFile(p) ? Files.size(p) + "\0" + Files.getLastModifiedTime(p).toMillis() : "-";
            d.update((e + "\0" + stamp + "\n").getBytes(StandardCharsets.UTF_8));
        }
        return DIR.resolve(kind.name() + "-" + hex(d.digest()) + ".jsa");
    }

    private static Path failedMarker(Path archive) {
        return archive.resolveSibling(archive.getFileName() + ".failed");
    }

    /**
     * Runs {@code kind}'s training main with {@code -XX:ArchiveClassesAtExit} into a temporary file
     * and renames it into place. Returns at once, untrained, if another test JVM holds the training
     * lock; a failure leaves a marker beside the archive (with the run's log) so it is not retried.
     */
    private static void train(ChildClasspath kind, List<String> classpath, List<String> defaultOptions, Path archive) throws IOException {
        Path lockFile = archive.resolveSibling(archive.getFileName() + ".lock");
        try (FileChannel ch = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
             FileLock lock = ch.tryLock()) {
            if (lock == null || Files.exists(archive)) {
                return; // the other test JVM trains it (its children start without it meanwhile), or has
            }
            Path scratch = Files.createTempDirectory(DIR, kind.name() + "-training");
            Path log = archive.resolveSibling(archive.getFileName() + ".training.log");
            try {
                Path dumped = scratch.resolve("archive.jsa");
                List<String> cmd = new ArrayList<>();
                cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
                cmd.addAll(defaultOptions);
                cmd.addAll(kind.trainingJvmOptions());
                cmd.add("-Djava.io.tmpdir=" + Files.createDirectories(scratch.resolve("tmp")));
                cmd.add("-XX:ArchiveClassesAtExit=" + dumped);
                cmd.add("-cp");
                cmd.add(String.join(File.pathSeparator, classpath));
                cmd.add(kind.trainingMain());
                cmd.addAll(kind.trainingArgs().apply(scratch));
                long t0 = System.nanoTime();
                Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile())
                        .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
                boolean ended = p.waitFor(3, TimeUnit.MINUTES);
                if (!ended) {
                    ChildJvm.sigkill(p);
                }
                if (ended && Files.isRegularFile(dumped) && Files.size(dumped) > 0) {
                    pruneOlder(kind, archive);
                    Files.move(dumped, archive, StandardCopyOption.ATOMIC_MOVE);
                    System.out.printf("[e2e] class-data-sharing archive for %s children trained in %.1f s: %s%n", kind.name(),
                            (System.nanoTime() - t0) / 1e9, archive.getFileName());
                } else {
                    Files.writeString(failedMarker(archive), "training " + (ended ? "exited " + p.exitValue() : "timed out")
                            + " without an archive; see " + log + "\n");
                    System.out.println("[e2e] class-data-sharing archive for " + kind.name() + " children not trained ("
                            + (ended ? "exit " + p.exitValue() : "timed out after 3 min") + ", see " + log + "): they start without one");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                deleteTree(scratch);
            }
        }
    }

    /** Earlier builds' archives of the same kind (about 70 MB each for servers) and their logs: this build's replaces them. */
    private static void pruneOlder(ChildClasspath kind, Path keep) throws IOException {
        try (DirectoryStream<Path> s = Files.newDirectoryStream(DIR, kind.name() + "-*.jsa*")) {
            for (Path old : s) {
                if (!old.getFileName().toString().startsWith(keep.getFileName().toString())) {
                    Files.deleteIfExists(old);
                }
            }
        }
    }

    private static void deleteTree(Path root) throws IOException {
        try (Stream<Path> s = Files.walk(root)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String hex(byte[] digest) {
        return HexFormat.of().formatHex(digest, 0, 8);
    }
}
