package org.holdfast.client.launch;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.LinkOption;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.holdfast.client.LeftoverTempFiles;
import org.holdfast.client.TempFileGuard;

/**
 * Writes the executable jar out as plain jars: {@code agent.jar} (the agent's own classes, its
 * manifest naming the main class and {@code lib/*.jar} on its Class-Path) and {@code lib/} (the
 * dependencies, copied as they are).
 *
 * <p>Why: the JVM's class-data sharing (AppCDS) archives only classes loaded from plain jars on the
 * class path, never those the executable jar's nested-jar loader defines, so the launcher runs the
 * agent from this layout with a shared archive and saves most of the class loading at start-up.
 * The layout is written into a fresh directory beside {@code dest} and renamed into place, so a
 * concurrent launcher never sees half of it; one a killed writer left goes at the next write.
 */
public final class ExplodedLayout {
    /** The hidden first argument that makes the agent's main write this layout and exit. */
    public static final String COMMAND = "--holdfast-write-exploded-layout";
    static final String CLASSES = "BOOT-INF/classes/";
    static final String LIB = "BOOT-INF/lib/";
    static final String MAIN_CLASS = "org.holdfast.client.cli.HoldfastAgent";
    static final String LOCK_SUFFIX = ".lock";
    // a lock file of a layout the launcher names (its key: cksum's CRC and size, joined by '-'), a dot,
    // TempFileGuard's random digits: nothing wider, in case the cache was pointed at a shared directory
    private static final Pattern LOCK_NAME = Pattern.compile("([0-9]+-[0-9]+)\\.[0-9]+\\.lock");

    private ExplodedLayout() {
    }

    /** Entry point: {@code args[1]} is the destination directory; the source is the jar this JVM runs. */
    public static int run(String[] args) {
        if (args.length != 2) {
            System.err.println("usage: " + COMMAND + " DIR");
            return 2;
        }
        String cp = System.getProperty("java.class.path", "");
        if (!cp.endsWith(".jar") || cp.contains(java.io.File.pathSeparator)) {
            System.err.println("holdfast-agent: not started with -jar (class path " + cp + ")");
            return 1;
        }
        try {
            write(Path.of(cp), Path.of(args[1]));
            return 0;
        } catch (IOException e) {
            System.err.println("holdfast-agent: cannot write the exploded layout: " + e);
            return 1;
        }
    }

    /** Writes the layout of executable jar {@code fatJar} to {@code dest} (which must not exist yet). */
    public static void write(Path fatJar, Path dest) throws IOException {
        write(fatJar, dest, line -> System.err.println("holdfast-agent: " + line));
    }

    /**
     * Like {@link #write(Path, Path)}; first removes what writers killed with SIGKILL left beside
     * {@code dest}, telling {@code notices}. The layout is written into {@code <dest>.<random>.tmp},
     * whose writer holds {@code <dest>.<random>.lock} (a {@link TempFileGuard}, locked) until the
     * directory is renamed or deleted: a lock no live process holds marks its directory as a leftover.
     * The lock file outlives a Ctrl-C or SIGTERM too (no hook deletes it once it is locked), so that
     * the directory it marks is found.
     */
    static void write(Path fatJar, Path dest, Consumer<String> notices) throws IOException {
        Path parent = dest.toAbsolutePath().getParent();
        Files.createDirectories(parent);
        removeAllLeftovers(parent, dest.getFileName().toString(), notices);
        TempFileGuard guard = TempFileGuard.create(parent, dest.getFileName() + ".", LOCK_SUFFIX);
        try (FileChannel lock = FileChannel.open(guard.path(), StandardOpenOption.WRITE)) {
            guard.lock(lock);
            lock.write(ByteBuffer.wrap((ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.UTF_8)));
            // from here the lock file marks the layout: the hook would delete it at Ctrl-C or SIGTERM and
            // orphan the half-written directory (the sweep finds layouts by their lock files only)
            guard.release();
            try {
                fill(fatJar, dest, Files.createDirectory(layoutOf(guard.path())));
            } finally {
                deleteTree(layoutOf(guard.path())); // gone after the rename; a failure's half-written layout otherwise
                Files.deleteIfExists(guard.path()); // while still locked: no other run judges it in between
            }
        } finally {
            guard.release();
        }
    }

    /**
     * Removes the leftovers of gone writers of {@code destName} and of every other layout the
     * launcher names in {@code parent} (a layout that another launcher finished is never written
     * again, so its own sweep never comes).
     */
    static void removeAllLeftovers(Path parent, String destName, Consumer<String> notices) {
        Set<String> destNames = new TreeSet<>(Set.of(destName));
        try (DirectoryStream<Path> locks = Files.newDirectoryStream(parent, "*" + LOCK_SUFFIX)) {
            for (Path lock : locks) {
                Matcher m = LOCK_NAME.matcher(lock.getFileName().toString());
                if (m.matches()) {
                    destNames.add(m.group(1));
                }
            }
        } catch (IOException | RuntimeException e) {
            // the others' wait for a later run; the write itself reports a directory it cannot use
        }
        for (String name : destNames) {
            removeLeftovers(parent, name, notices);
        }
    }

    /** Removes the half-written layouts (and their lock files) of writers of {@code destName} in {@code parent} that are gone. */
    static void removeLeftovers(Path parent, String destName, Consumer<String> notices) {
        for (LeftoverTempFiles.Removed lock : LeftoverTempFiles.remove(parent, destName + ".", LOCK_SUFFIX,
                "an agent writing its class-data layout " + destName, notices)) {
            try {
                deleteTree(layoutOf(lock.file()));
            } catch (IOException e) {
                notices.accept("cannot remove " + layoutOf(lock.file()) + ": " + e.getMessage() + "; delete it by hand");
            }
        }
    }

    private static Path layoutOf(Path lockFile) {
        String name = lockFile.getFileName().toString();
        return lockFile.resolveSibling(name.substring(0, name.length() - LOCK_SUFFIX.length()) + ".tmp");
    }

    private static void deleteTree(Path root) throws IOException {
        if (Files.exists(root, LinkOption.NOFOLLOW_LINKS)) {
            try (var walk = Files.walk(root)) {
                for (Path p : (Iterable<Path>) walk.sorted(java.util.Comparator.reverseOrder())::iterator) {
                    Files.delete(p);
                }
            }
        }
    }

    private static void fill(Path fatJar, Path dest, Path tmp) throws IOException {
        Path lib = Files.createDirectories(tmp.resolve("lib"));
        List<String> libs = new ArrayList<>();
        Manifest mf = new Manifest();
        Attributes main = mf.getMainAttributes();
        try (JarFile jar = new JarFile(fatJar.toFile())) {
            for (Enumeration<JarEntry> en = jar.entries(); en.hasMoreElements(); ) {
                JarEntry e = en.nextElement();
                String name = e.getName();
                if (!e.isDirectory() && name.startsWith(LIB) && name.endsWith(".jar") && name.indexOf('/', LIB.length()) < 0) {
                    String file = name.substring(LIB.length());
                    try (InputStream in = jar.getInputStream(e)) {
                        Files.copy(in, lib.resolve(file), StandardCopyOption.REPLACE_EXISTING);
                    }
                    libs.add("lib/" + file);
                }
            }
            main.put(Attributes.Name.MANIFEST_VERSION, "1.0");
            main.put(Attributes.Name.MAIN_CLASS, MAIN_CLASS);
            main.put(Attributes.Name.CLASS_PATH, String.join(" ", libs));
            Attributes fatMain = jar.getManifest() == null ? null : jar.getManifest().getMainAttributes();
            if (fatMain != null && fatMain.getValue(Attributes.Name.IMPLEMENTATION_VERSION) != null) {
                main.put(Attributes.Name.IMPLEMENTATION_TITLE, String.valueOf(fatMain.getValue(Attributes.Name.IMPLEMENTATION_TITLE)));
                main.put(Attributes.Name.IMPLEMENTATION_VERSION, fatMain.getValue(Attributes.Name.IMPLEMENTATION_VERSION));
            }
            try (OutputStream os = Files.newOutputStream(tmp.resolve("agent.jar"));
                 JarOutputStream out = new JarOutputStream(os, mf)) {
                for (Enumeration<JarEntry> en = jar.entries(); en.hasMoreElements(); ) {
                    JarEntry e = en.nextElement();
                    String name = e.getName();
                    if (!name.startsWith(CLASSES) || name.length() == CLASSES.length()) {
                        continue;
                    }
                    out.putNextEntry(new JarEntry(name.substring(CLASSES.length())));
                    if (!e.isDirectory()) {
                        try (InputStream in = jar.getInputStream(e)) {
                            in.transferTo(out);
                        }
                    }
                    out.closeEntry();
                }
            }
        }
        if (libs.isEmpty()) {
            throw new IOException(fatJar + " has no " + LIB + " jars: not an executable agent jar");
        }
        try {
            Files.setPosixFilePermissions(tmp, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        } catch (UnsupportedOperationException | IOException e) {
            // not a POSIX file system: the default permissions do
        }
        Files.move(tmp, dest, StandardCopyOption.ATOMIC_MOVE);
    }
}
