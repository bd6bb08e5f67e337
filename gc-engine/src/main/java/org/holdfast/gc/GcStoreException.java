package org.holdfast.gc;

import java.nio.file.Path;

/**
 * A GC file (GMA, update log, checkpoint) could not be read or written. Names the store, the path
 * and the key (chunk index, LSN) so that an operator can find what broke. Unchecked: the I/O
 * failure is translated once, at the file boundary.
 */
public class GcStoreException extends RuntimeException {
    public GcStoreException(String store, Path path, String key, String message, Throwable cause) {
        super(store + " [" + path + "]" + (key == null ? "" : " key " + key) + ": " + message, cause);
    }

    public GcStoreException(String store, Path path, String key, String message) {
        this(store, path, key, message, null);
    }
}
