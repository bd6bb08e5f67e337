package org.holdfast.server.engine;

/**
 * The master's lookup request to a {@link DedupWorker} (thesis 7.2.1): {@code count} fingerprints of
 * consecutive LBNs of one stream, packed 32 bytes each in {@code fps}. In nearest mode every worker
 * gets the same request (the broadcast); in hash mode each gets its share of the entries. The arrays
 * belong to the caller; a worker reads them before its answer completes and keeps no reference.
 */
public record SegmentLookup(long stream, byte[] fps, int count) {
    public SegmentLookup {
        if (count < 0 || fps.length < count * 32L) {
            throw new IllegalArgumentException("lookup of " + count + " entries does not fit " + fps.length + " fingerprint bytes");
        }
    }
}
