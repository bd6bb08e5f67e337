package org.holdfast.client;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * Where the agent keeps what it must remember between runs (the known-servers file, the per-volume
 * state files): {@code $XDG_STATE_HOME/holdfast}, else {@code $HOME/.local/state/holdfast}, as the
 * XDG base-directory specification places state that is not configuration and not cache.
 *
 * <p>Agents before this layout kept both in {@code ~/.holdfast/}; the first use of the new
 * directory moves what is there, entry by entry, and says so once. Those agents took {@code ~} from
 * Java's {@code user.home} (the passwd entry), not {@code $HOME}: where the two differ, an entry
 * missing from {@code $HOME/.holdfast} is taken from {@code user.home}'s. An entry that exists in the new
 * place already is never overwritten (the old one stays, for the user to look at).
 */
public final class StateDirectory {
    /** The known-servers file's name inside the directory. */
    public static final String KNOWN_SERVERS = "known-servers";
    /** The directory of per-server, per-volume state files inside the directory. */
    public static final String AGENT_STATE = "agent-state";
    private static final List<String> ENTRIES = List.of(KNOWN_SERVERS, AGENT_STATE);
    /** The mode of every directory the agent makes for its state: readable only by its user. */
    private static final Set<PosixFilePermission> PRIVATE = PosixFilePermissions.fromString("rwx------");
    /** Held (fcntl) by the agent moving old entries in, inside the directory; made only when there is something to move. */
    static final String MIGRATE_LOCK = ".migrate.lock";
    private static final Set<PosixFilePermission> PRIVATE_FILE = PosixFilePermissions.fromString("rw-------");
    // the file lock cannot exclude another thread of this JVM (the daemon resolves for several volumes)
    private static final Object MIGRATING = new Object();

    private final Path dir;
    private final List<Path> legacy;

    StateDirectory(Path dir, List<Path> legacy) {
        this.dir = dir;
        this.legacy = List.copyOf(legacy);
    }

    /** The directory for this process's environment. */
    public static StateDirectory current() {
        return of(System.getenv(), System.getProperty("user.home"));
    }

    /** The directory {@code env} ({@code XDG_STATE_HOME}, {@code HOME}) names; {@code userHome} if HOME is unset. */
    public static StateDirectory of(Map<String, String> env, String userHome) {
        String home = env.getOrDefault("HOME", "");
        Path homeDir = Path.of(home.isBlank() ? userHome : home);
        String xdg = env.getOrDefault("XDG_STATE_HOME", "");
        // the specification says a relative value is invalid and must be ignored
        Path base = !xdg.isBlank() && Path.of(xdg).isAbsolute() ? Path.of(xdg) : homeDir.resolve(".local/state");
        List<Path> legacy = new ArrayList<>(List.of(homeDir.resolve(".holdfast")));
        Path javaHome = Path.of(userHome).resolve(".holdfast");
        if (!legacy.contains(javaHome)) {
            legacy.add(javaHome); // where an older agent run with another HOME wrote it
        }
        return new StateDirectory(base.resolve("holdfast"), legacy);
    }

    /** The state directory itself. */
    public Path path() {
        return dir;
    }

    /** Where agents before this layout kept their state ({@code $HOME/.holdfast}; see the class comment for the other place). */
    public Path legacyPath() {
        return legacy.get(0);
    }

    /**
     * {@code name} inside the state directory, after moving an old copy of it over (see the class
     * comment) and making the directory private if an earlier release left it open to others.
     */
    public Path resolve(String name, Consumer<String> notice) {
        migrate(notice);
        tighten(notice);
        return dir.resolve(name);
    }

    /**
     * Releases before this one created the directory with the umask's mode (0755 under 022), which
     * let other users list the servers and volumes in it: narrow it to 0700 once, saying so. Only
     * this directory (below it, nothing is reachable without passing it) and only if this user owns it.
     */
    private void tighten(Consumer<String> notice) {
        try {
            if (!Files.isDirectory(dir, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                return;
            }
            var mode = Files.getPosixFilePermissions(dir, java.nio.file.LinkOption.NOFOLLOW_LINKS);
            var owner = Files.getOwner(dir, java.nio.file.LinkOption.NOFOLLOW_LINKS);
            if (mode.equals(PRIVATE) || !owner.getName().equals(System.getProperty("user.name"))) {
                return;
            }
            Files.setPosixFilePermissions(dir, PRIVATE);
            notice.accept("made " + dir + " readable only by you (it was " + PosixFilePermissions.toString(mode)
                    + "; it names your servers and volumes)");
        } catch (IOException | UnsupportedOperationException e) {
            // not POSIX, or not ours to change: the files in it are 0600 all the same
        }
    }

    /**
     * Moves the old entries that the new directory lacks; returns the names moved. One agent at a
     * time moves them ({@link #MIGRATE_LOCK}): a second one that started meanwhile would delete the
     * first one's {@code .moving} copy while it is written, and the first would then rename what
     * was left of it into place and delete the old entry.
     */
    public List<String> migrate(Consumer<String> notice) {
        List<String> moved = new ArrayList<>();
        for (String name : ENTRIES) {
            Path from = legacyEntry(name);
            Path to = dir.resolve(name);
            if (from == null || Files.exists(to)) {
                continue;
            }
            try {
                createPrivate(dir);
                synchronized (MIGRATING) {
                    try (FileChannel lock = FileChannel.open(dir.resolve(MIGRATE_LOCK), Set.of(StandardOpenOption.CREATE,
                            StandardOpenOption.WRITE), PosixFilePermissions.asFileAttribute(PRIVATE_FILE))) {
                        try {
                            lock.lock(); // released by the kernel if the holder is killed
                        } catch (java.nio.channels.FileLockInterruptionException | java.nio.channels.ClosedChannelException e) {
                            throw e; // interrupted while waiting: not a reason to move without the lock
                        } catch (IOException noLocks) {
                            // a file system without locks: agents started together may still race, as before
                        }
                        from = legacyEntry(name); // the agent this one waited for may have moved it
                        if (from == null || Files.exists(to)) {
                            continue;
                        }
                        move(from, to);
                    }
                }
            } catch (IOException e) {
                throw IoReasons.localIo("cannot move the agent's old state " + from + " to", to, e,
                        "move it by hand (mv " + from + " " + to + "), then retry");
            }
            moved.add(name);
            notice.accept("moved " + from + " to " + to + " (the agent's state now lives in " + dir + ")");
        }
        return moved;
    }

    private Path legacyEntry(String name) {
        return legacy.stream().map(l -> l.resolve(name)).filter(Files::exists).findFirst().orElse(null);
    }

    /**
     * Creates {@code d} and its missing parents, each one it creates readable only by this user (the
     * agent's state names servers, volumes and block fingerprints); directories that exist keep their mode.
     */
    public static void createPrivate(Path d) throws IOException {
        // the attribute applies to every directory createDirectories creates, parents included
        Files.createDirectories(d, PosixFilePermissions.asFileAttribute(PRIVATE));
    }

    /** A rename where possible; across file systems a copy of the tree, then the old one removed. */
    private static void move(Path from, Path to) throws IOException {
        try {
            Files.move(from, to, StandardCopyOption.ATOMIC_MOVE);
            return;
        } catch (IOException crossDevice) {
            // fall through to copying
        }
        Path partial = to.resolveSibling(to.getFileName() + ".moving");
        // a copy that a killed agent left: a directory copy cannot replace it, and the old state is still complete
        deleteTree(partial);
        try (Stream<Path> walk = Files.walk(from)) {
            for (Path p : (Iterable<Path>) walk::iterator) {
                Files.copy(p, partial.resolve(from.relativize(p).toString()), StandardCopyOption.COPY_ATTRIBUTES,
                        StandardCopyOption.REPLACE_EXISTING);
            }
        }
        Files.move(partial, to, StandardCopyOption.ATOMIC_MOVE);
        deleteTree(from);
    }

    private static void deleteTree(Path root) throws IOException {
        if (!Files.exists(root, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path p : (Iterable<Path>) walk.sorted(Comparator.reverseOrder())::iterator) {
                Files.delete(p);
            }
        }
    }
}
