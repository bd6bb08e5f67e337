package org.holdfast.server.store;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A range store's digests of its uploaded logs, for the sealed-log report to its master: meta key
 * {@value #META_SEALED}{@code <id, 8 hex>}, value u8 version 1, u64 log epoch of the object digested,
 * u64 size, 32 bytes SHA-256 of the object's bytes (docs/architecture.md "Sealed-log digests"). Written
 * in the batch that confirms the upload (or switches to a compacted copy), deleted with the upload
 * record; a digest whose log epoch is not the upload record's is stale and counts as none.
 */
public final class SealedDigests {
    /** Meta key prefix, followed by the log id in hex. */
    static final String META_SEALED = "store.object.sealed/";
    private static final int VERSION = 1;
    private static final int BYTES = 1 + 8 + 8 + 32;

    /** One log object's digest: the log epoch naming it, its size and SHA-256. */
    public record Digest(long logEpoch, long size, byte[] sha256) {
        public Digest {
            sha256 = sha256.clone();
        }

        @Override
        public byte[] sha256() {
            return sha256.clone();
        }
    }

    private SealedDigests() {
    }

    /** The digest of {@code file}, the object of log epoch {@code logEpoch}. */
    static Digest of(Path file, long logEpoch) {
        try {
            return new Digest(logEpoch, Files.size(file), SealedLogs.sha256(file));
        } catch (IOException e) {
            throw StoreException.translate("log-archive", file.toString(), null, e);
        }
    }

    static byte[] key(int id) {
        return MetadataDb.bytes(META_SEALED + String.format("%08x", id));
    }

    static void put(MetadataDb db, MetadataBatch b, int id, Digest d) {
        db.put(b, MetadataDb.Column.META, key(id), encode(d));
    }

    static void delete(MetadataDb db, MetadataBatch b, int id) {
        db.delete(b, MetadataDb.Column.META, key(id));
    }

    /** Log {@code id}'s digest if it is of the object of log epoch {@code logEpoch}, else null. */
    static Digest get(MetadataDb db, int id, long logEpoch) {
        byte[] v = db.get(MetadataDb.Column.META, key(id));
        if (v == null) {
            return null;
        }
        Digest d = decode(v, db.path());
        return d.logEpoch() == logEpoch ? d : null;
    }

    static byte[] encode(Digest d) {
        byte[] v = new byte[BYTES];
        v[0] = VERSION;
        Bytes.putLong(v, 1, d.logEpoch());
        Bytes.putLong(v, 9, d.size());
        System.arraycopy(d.sha256(), 0, v, 17, 32);
        return v;
    }

    static Digest decode(byte[] v, String where) {
        if (v.length != BYTES || v[0] != VERSION) {
            throw new CorruptDataException("log-archive", where, META_SEALED, "a sealed-log digest has " + v.length + " bytes, version "
                    + (v.length > 0 ? v[0] : -1) + " (this build reads version " + VERSION + ", " + BYTES + " bytes)");
        }
        return new Digest(Bytes.getLong(v, 1), Bytes.getLong(v, 9), java.util.Arrays.copyOfRange(v, 17, BYTES));
    }
}
