package org.holdfast.server.store;

/**
 * The encoding of a u64 meta value (8 bytes, big-endian), shared by {@link MetadataDb} and the
 * read-only {@link CatalogPeek} so both read a value the same way.
 */
final class MetaLong {
    private static final String STORE = "metadata-db";

    private MetaLong() {
    }

    /** The 8 bytes of {@code value}. */
    static byte[] encode(long value) {
        byte[] v = new byte[8];
        Bytes.putLong(v, 0, value);
        return v;
    }

    /**
     * The value {@code v} of meta key {@code key} in the catalog at {@code path}, or {@code dflt} if
     * {@code v} is null (absent); any other length than 8 is corrupt data.
     */
    static long decode(byte[] v, String path, String key, long dflt) {
        if (v == null) {
            return dflt;
        }
        if (v.length != 8) {
            throw new CorruptDataException(STORE, path, key, "meta value has " + v.length + " bytes, expected 8");
        }
        return Bytes.getLong(v, 0);
    }
}
