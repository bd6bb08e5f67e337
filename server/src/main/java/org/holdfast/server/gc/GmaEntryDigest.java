package org.holdfast.server.gc;

import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import org.holdfast.gc.bosc.BoscPipeline;

/**
 * A count and SHA-256 of GMA entries in PBN order, each taken as PBN, reference count, pins and
 * expiry (24 bytes): a GC metadata build ({@link GcMetadataRebuild}, a worker's counts import) takes
 * one of what it writes and one of what the built directory reads back ({@link #readBack}), and
 * swaps the build in only if the two are the same. Not thread-safe.
 */
public final class GmaEntryDigest {
    private final MessageDigest sha;
    private final ByteBuffer entry = ByteBuffer.allocate(8 + 4 + 4 + 8);
    private long entries;

    public GmaEntryDigest() {
        try {
            sha = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    /** Takes the entry of {@code pbn}. */
    public void add(long pbn, int rc, int pins, long expiry) {
        entry.clear();
        entry.putLong(pbn).putInt(rc).putInt(pins).putLong(expiry);
        sha.update(entry.array());
        entries++;
    }

    /** How many entries were taken. */
    public long entries() {
        return entries;
    }

    /** The entries {@code pipeline}'s GMA holds, as its scan reads them back. */
    public static GmaEntryDigest readBack(BoscPipeline pipeline) {
        GmaEntryDigest d = new GmaEntryDigest();
        pipeline.gma().scan(pipeline.chunkLimit(), (pbn, rc, pins, flags, expiry) -> d.add(pbn, rc, pins, expiry));
        return d;
    }

    /** True if {@code other} took as many entries, and the same in the same order. Ends both digests: ask once. */
    public boolean sameAs(GmaEntryDigest other) {
        return entries == other.entries && MessageDigest.isEqual(sha.digest(), other.sha.digest());
    }
}
