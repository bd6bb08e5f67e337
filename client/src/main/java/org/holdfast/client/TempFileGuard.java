package org.holdfast.client;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Deletes a temporary file if the JVM exits (Ctrl-C, SIGTERM) while it is still being written, so
 * an interrupted restore or backup leaves nothing behind. The owner calls {@link #release} once the
 * file was renamed into place or deleted; after that the guard does nothing.
 *
 * <p>A shutdown hook rather than {@code deleteOnExit}: the hook can be removed when the file is
 * done, and never deletes the file's final name after the rename (the temporary name is gone then).
 */
public final class TempFileGuard {
    private final Path temp;
    private final Thread hook;
    private volatile boolean released;

    private TempFileGuard(Path temp) {
        this.temp = temp;
        this.hook = new Thread(this::delete, "holdfast-temp-cleanup");
    }

    /** Guards {@code temp} from now until {@link #release}. */
    public static TempFileGuard of(Path temp) {
        TempFileGuard g = new TempFileGuard(temp);
        Runtime.getRuntime().addShutdownHook(g.hook);
        return g;
    }

    private void delete() {
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
