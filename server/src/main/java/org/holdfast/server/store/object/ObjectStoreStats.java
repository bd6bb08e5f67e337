package org.holdfast.server.store.object;

/** Requests made to an object store and the bytes they moved, since it was opened; retries counts repeated attempts. */
public record ObjectStoreStats(long puts, long putBytes, long gets, long getBytes, long deletes, long heads, long lists,
        long retries) {
}
