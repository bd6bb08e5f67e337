package org.holdfast.server.catalog;

import org.holdfast.common.id.VolumeId;

/**
 * A protected volume as the catalog knows it; {@code internalId} is what map and snapshot keys use.
 * {@code domain} is its dedup domain, fixed when the volume is created: blocks are shared only
 * between volumes of one domain.
 */
public record VolumeRecord(VolumeId name, long internalId, int blockSize, long createdAtMillis, long latestSequence, long volumeBytes,
                           String domain) {
    /** The domain of every volume created before domains existed, and of volumes created without one. */
    public static final String DEFAULT_DOMAIN = "default";
    /** Longest domain name, in bytes. */
    public static final int MAX_DOMAIN_LENGTH = 64;

    public VolumeRecord {
        domain = domain == null || domain.isEmpty() ? DEFAULT_DOMAIN : domain;
        if (!isValidDomain(domain)) {
            throw new IllegalArgumentException("invalid dedup domain '" + domain + "': use 1 to " + MAX_DOMAIN_LENGTH
                    + " letters, digits, '.', '_' or '-'");
        }
    }

    /** A volume of the default domain. */
    public VolumeRecord(VolumeId name, long internalId, int blockSize, long createdAtMillis, long latestSequence, long volumeBytes) {
        this(name, internalId, blockSize, createdAtMillis, latestSequence, volumeBytes, DEFAULT_DOMAIN);
    }

    /** True for 1 to 64 ASCII letters, digits, '.', '_' or '-'. */
    public static boolean isValidDomain(String domain) {
        return domain != null && !domain.isEmpty() && domain.length() <= MAX_DOMAIN_LENGTH && domain.matches("[A-Za-z0-9._-]+");
    }

    /** Blocks in the latest snapshot. */
    public long blockCount() {
        return blockCount(volumeBytes, blockSize);
    }

    /** ceil(volumeBytes / blockSize). */
    public static long blockCount(long volumeBytes, int blockSize) {
        return volumeBytes / blockSize + (volumeBytes % blockSize == 0 ? 0 : 1);
    }
}
