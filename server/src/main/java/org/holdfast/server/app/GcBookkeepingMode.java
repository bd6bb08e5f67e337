package org.holdfast.server.app;

import java.util.Locale;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.MetadataBatch;
import org.holdfast.server.store.MetadataDb;

/**
 * {@code holdfast.gc.bookkeeping}: whether snapshot commits are counted for garbage collection
 * ({@code on}, the default) or not ({@code off}, for benchmarking the cost of counting only).
 *
 * <p>The mode is fixed when the data directory is created and kept in the catalog's meta column
 * ({@value #META_KEY}): a store whose commits were not all counted must never be swept, because
 * a sweep would free blocks that uncounted snapshots still reference. {@link #settle} refuses to
 * start a store with the other mode. A store created before the setting existed has had every
 * commit counted: it is an {@code on} store.
 */
public enum GcBookkeepingMode {
    ON(1), OFF(2);

    /** Meta key holding the mode the store was created with (1 = on, 2 = off). */
    public static final String META_KEY = "gc.bookkeeping-mode";

    private final long code;

    GcBookkeepingMode(long code) {
        this.code = code;
    }

    /** {@code on}/{@code off}; also {@code true}/{@code false}, which YAML makes of an unquoted on/off. */
    public static GcBookkeepingMode parse(String text) {
        String t = text == null ? "" : text.trim().toLowerCase(Locale.ROOT);
        return switch (t) {
            case "on", "true" -> ON;
            case "off", "false" -> OFF;
            default -> throw new IllegalArgumentException("holdfast.gc.bookkeeping must be 'on' or 'off', not '" + text + "'");
        };
    }

    public String label() {
        return this == ON ? "on" : "off";
    }

    /** The mode this store was created with, or null if none is recorded. */
    public static GcBookkeepingMode recorded(MetadataDb db) {
        long v = db.metaLong(META_KEY, 0);
        for (GcBookkeepingMode m : values()) {
            if (m.code == v) {
                return m;
            }
        }
        if (v != 0) {
            throw new IllegalStateException("catalog " + db.path() + " records an unknown GC bookkeeping mode " + v
                    + " under '" + META_KEY + "': this server is older than the store");
        }
        return null;
    }

    /**
     * Checks {@code configured} against the store and records it if the store is new. Throws
     * {@link GcModeMismatchException} if the store was created with the other mode.
     */
    public static GcBookkeepingMode settle(GcBookkeepingMode configured, MetadataDb db) {
        GcBookkeepingMode stored = recorded(db);
        if (stored == null) {
            // No mode recorded: a new store, or one from before the setting (every commit counted).
            boolean hasHistory = db.metaLong(FormatVersions.META_NEXT_VOLUME_ID, -1) != -1;
            stored = hasHistory ? ON : configured;
            try (MetadataBatch b = new MetadataBatch()) {
                db.putMetaLong(b, META_KEY, stored.code);
                db.write(b, true);
            }
        }
        if (stored != configured) {
            throw new GcModeMismatchException(db.path(), stored, configured);
        }
        return stored;
    }

    /** The store was created with the other bookkeeping mode; starting it would risk losing data. */
    public static final class GcModeMismatchException extends IllegalStateException {
        private final GcBookkeepingMode stored;

        GcModeMismatchException(String path, GcBookkeepingMode stored, GcBookkeepingMode configured) {
            super("the data directory (catalog " + path + ") was created with holdfast.gc.bookkeeping=" + stored.label()
                    + " but the server is configured with holdfast.gc.bookkeeping=" + configured.label() + ". "
                    + (stored == OFF
                    ? "Its snapshots were never counted for garbage collection, so a sweep would free blocks they still "
                    + "reference; an 'off' store stays 'off' for its whole life."
                    : "Turning bookkeeping off would leave later snapshots uncounted, and the next sweep would free "
                    + "blocks they reference."));
            this.stored = stored;
        }

        /** What to do about it. */
        public String action() {
            return stored == OFF
                    ? "Start this data directory with holdfast.gc.bookkeeping=off again (benchmarking only), or back up "
                    + "into a new data directory with bookkeeping on."
                    : "Start this data directory with holdfast.gc.bookkeeping=on (the default); to benchmark with "
                    + "bookkeeping off, use a new, empty data directory.";
        }
    }
}
