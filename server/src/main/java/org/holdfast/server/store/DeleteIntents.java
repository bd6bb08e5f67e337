package org.holdfast.server.store;

import java.nio.charset.StandardCharsets;

/**
 * The catalog's delete intents: {@code meta} key {@value #META_RETIRE}{@code <object key>}, value the
 * log id (u32) and its kind ({@link #WHOLE_LOG} or 0), each written synced before the object call it
 * guards, so a crash leaves no object behind that nothing names.
 */
final class DeleteIntents {
    /** Meta key prefix of an object to delete, followed by its object key; value: the log id (4 bytes) and {@link #WHOLE_LOG} or 0. */
    static final String META_RETIRE = "store.object.retire/";
    /** Retire-intent flag: the whole log is dead (local file, object, then upload record go); else only a superseded object. */
    static final byte WHOLE_LOG = 1;

    private final MetadataDb db;

    DeleteIntents(MetadataDb db) {
        this.db = db;
    }

    /** The delete intents in the catalog, by object key (checked). */
    java.util.Map<String, byte[]> intents() {
        byte[] prefix = MetadataDb.bytes(META_RETIRE);
        java.util.Map<String, byte[]> intents = new java.util.TreeMap<>();
        try (CheckedIterator it = db.iterator(MetadataDb.Column.META)) {
            for (it.seek(prefix); it.isValid() && Bytes.startsWith(it.key(), prefix); it.next()) {
                intents.put(new String(it.key(), prefix.length, it.key().length - prefix.length, StandardCharsets.UTF_8),
                        checkedIntent(it.key(), it.value()));
            }
        }
        return intents;
    }

    void putIntent(String key, int id, byte kind) {
        try (MetadataBatch b = new MetadataBatch()) {
            db.put(b, MetadataDb.Column.META, MetadataDb.bytes(META_RETIRE + key), intentValue(id, kind));
            db.write(b, true);
        }
    }

    private byte[] checkedIntent(byte[] key, byte[] v) {
        if (v.length != 5 || v[4] != 0 && v[4] != WHOLE_LOG) {
            throw new CorruptDataException("log-archive", db.path(), new String(key, StandardCharsets.UTF_8),
                    "delete intent has " + v.length + " bytes (5 expected) or an unknown kind");
        }
        return v;
    }

    static byte[] intentValue(int id, byte kind) {
        byte[] v = new byte[5];
        Bytes.putInt(v, 0, id);
        v[4] = kind;
        return v;
    }
}
