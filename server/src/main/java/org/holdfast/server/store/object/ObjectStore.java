package org.holdfast.server.store.object;

import java.nio.file.Path;
import java.util.List;
import java.util.OptionalLong;

/**
 * An S3-like store of immutable objects. Every call retries the store's transient failures
 * (timeouts, 5xx, throttling) and, once they persist, throws {@link ObjectStoreUnavailableException}:
 * an unreachable store is never reported as corrupt data.
 */
public interface ObjectStore extends AutoCloseable {

    /**
     * Uploads {@code file} as {@code key} only if no object has that key (create-only,
     * {@code If-None-Match: *}). Returns false if one already exists; it is never overwritten.
     */
    boolean putIfAbsent(String key, Path file);

    /** Reads {@code length} bytes of {@code key} from {@code offset} (a ranged GET). */
    byte[] getRange(String key, long offset, int length);

    /** Downloads the whole object {@code key} into {@code target} (replaced if present). */
    void download(String key, Path target);

    /** Deletes {@code key}; deleting a missing key is not an error. */
    void delete(String key);

    /** The object's size, or empty if there is no such object (a HEAD). */
    OptionalLong size(String key);

    /** The keys that start with {@code prefix}, in the store's order. */
    List<String> list(String prefix);

    /** Requests and bytes so far (object stores bill per request). */
    ObjectStoreStats stats();

    @Override
    void close();
}
