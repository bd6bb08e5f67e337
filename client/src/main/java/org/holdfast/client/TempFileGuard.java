package org.holdfast.client;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Path;
import java.nio.file.attribute.FileAttribute;
import java.security.SecureRandom;

/**
 * Deletes a temporary file if the JVM exits (Ctrl-C, SIGTERM) while it is still being written, so
 * an interrupted restore or backup leaves nothing behind. The owner calls {@link #release} once the
 * file was renamed into place or deleted; after that the guard does nothing.
 *
 * <p>A shutdown hook rather than {@code deleteOnExit}: the hook can be removed when the file is
 * done, and never deletes the file's final name after the rename (the temporary name is gone then).
 * The hook is in place before the file exists ({@link #create}), so a signal at any moment leaves
 * nothing behind.
 */
public final class TempFileGuard {
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Path temp;
    private final Thread hook;
    private volatile boolean released;
    private volatile boolean hookStarted;

    private TempFileGuard(Path temp) {
        this.temp = temp;
        this.hook = new Thread(this::delete, "holdfast-temp-cleanup");
    }

    /**
     * Creates a new file {@code <prefix><random><suffix>} in {@code dir} with {@code attrs},
     * guarded from before it exists until {@link #release}.
     */
    public static TempFileGuard create(Path dir, String prefix, String suffix, FileAttribute<?>... attrs)
            throws IOException {
        while (true) {
            TempFileGuard g = new TempFileGuard(dir.resolve(prefix + Long.toUnsignedString(RANDOM.nextLong()) + suffix));
            Runtime.getRuntime().addShutdownHook(g.hook);
            try {
                Files.createFile(g.temp, attrs);
                if (g.hookStarted) { // the JVM began exiting while the file was made: the hook may have missed it
                    Files.deleteIfExists(g.temp);
                    throw new IOException("the agent is shutting down");
                }
                return g;
            } catch (FileAlreadyExistsException taken) {
                g.release(); // not ours: never delete it; draw another name
            } catch (IOException | RuntimeException e) {
                g.release();
                throw e;
            }
        }
    }

    /** The guarded file. */
    public Path path() {
        return temp;
    }

    private void delete() {
        hookStarted = true;
        if (!released) {
            try {
                Files.deleteIfExists(temp);
            } catch (IOException ignored) {
                // the JVM is exiting; nothing else to try
            }
        }
    }

    /** The file was renamed into place or deleted by its owner. Idempotent. */
    public void release() {
        if (released) {
            return;
        }
        released = true;
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException exiting) {
            // the JVM is shutting down: the hook runs (or ran) and sees released
        }
    }
}
