package org.holdfast.server.app;

import java.util.Locale;
import org.holdfast.server.cluster.ClusterRole;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.MetadataBatch;
import org.holdfast.server.store.MetadataDb;

/**
 * {@code holdfast.cluster.data}: where a master's backups keep their blocks: in its own data store
 * ({@code master}, the default, as a standalone server) or in its workers' range stores
 * ({@code workers}, experimental: data on workers, docs/architecture.md).
 *
 * <p>Fixed when the data directory is created and kept in the catalog's meta column
 * ({@value #META_KEY}), like {@link GcBookkeepingMode}: the catalog's PBNs name blocks in one place
 * or the other, so a store that changed would reference blocks nobody reads. {@link #settle}
 * refuses to start with the other mode. A store created before the setting existed is a
 * {@code master} store. {@code workers} needs the master role and the cluster dedup engine (which
 * names the storing worker of each block); GC bookkeeping may be on (the master routes each
 * operation's updates to the owners, which sweep their own ranges) or off.
 */
public enum ClusterDataMode {
    MASTER(1), WORKERS(FormatVersions.CLUSTER_DATA_ON_WORKERS);

    /** Meta key holding the mode the store was created with (1 = master, 2 = workers). */
    public static final String META_KEY = FormatVersions.META_CLUSTER_DATA_MODE;

    private final long code;

    ClusterDataMode(long code) {
        this.code = code;
    }

    /** {@code master} or {@code workers}. */
    public static ClusterDataMode parse(String text) {
        String t = text == null ? "" : text.trim().toLowerCase(Locale.ROOT);
        return switch (t) {
            case "master" -> MASTER;
            case "workers" -> WORKERS;
            default -> throw new IllegalArgumentException("holdfast.cluster.data must be 'master' or 'workers', not '" + text + "'");
        };
    }

    public String label() {
        return this == MASTER ? "master" : "workers";
    }

    /** The mode this store was created with, or null if none is recorded. */
    public static ClusterDataMode recorded(MetadataDb db) {
        long v = db.metaLong(META_KEY, 0);
        for (ClusterDataMode m : values()) {
            if (m.code == v) {
                return m;
            }
        }
        if (v != 0) {
            throw new IllegalStateException("catalog " + db.path() + " records an unknown cluster data mode " + v + " under '"
                    + META_KEY + "': this server is older than the store");
        }
        return null;
    }

    /**
     * Checks {@code configured} against what it needs ({@code role}, {@code dedupEngine})
     * and against the store, recording it if the store is new; nothing is recorded when it is refused.
     *
     * @throws ClusterDataModeException if the store was created with the other mode, or {@code workers} lacks what it needs
     */
    public static ClusterDataMode settle(ClusterDataMode configured, ClusterRole role, String dedupEngine,
                                         MetadataDb db) {
        if (configured == WORKERS) {
            if (role != ClusterRole.MASTER) {
                throw new ClusterDataModeException("holdfast.cluster.data=workers is set on a node whose holdfast.cluster.role is "
                        + role.name().toLowerCase(Locale.ROOT) + ": only a master keeps its blocks on its workers",
                        "Set holdfast.cluster.role=master, or remove holdfast.cluster.data (the default is master).");
            }
            if (!"cluster".equals(dedupEngine)) {
                throw new ClusterDataModeException("holdfast.cluster.data=workers needs holdfast.dedup.engine=cluster (the engine"
                        + " names the worker that stores each block), not '" + dedupEngine + "'",
                        "Set holdfast.dedup.engine=cluster, or keep holdfast.cluster.data=master.");
            }
        }
        ClusterDataMode stored = recorded(db);
        boolean unrecorded = stored == null;
        if (unrecorded) {
            // a store from before the setting has its blocks in its own data store
            boolean hasHistory = db.metaLong(FormatVersions.META_NEXT_VOLUME_ID, -1) != -1;
            stored = hasHistory ? MASTER : configured;
        }
        if (stored != configured) {
            throw new ClusterDataModeException("the data directory (catalog " + db.path() + ") was created with holdfast.cluster.data="
                    + stored.label() + " but the server is configured with holdfast.cluster.data=" + configured.label()
                    + ": its snapshots reference blocks kept " + (stored == MASTER ? "in the master's data store" : "on the workers")
                    + ", which the other mode would never read",
                    "Start this data directory with holdfast.cluster.data=" + stored.label() + " again; the mode is fixed for the life"
                            + " of a data directory, so use a new, empty one to try the other.");
        }
        if (unrecorded) { // only once accepted: a refusal records nothing
            try (MetadataBatch b = new MetadataBatch()) {
                db.putMetaLong(b, META_KEY, stored.code);
                db.write(b, true);
            }
        }
        return stored;
    }

    /** {@code holdfast.cluster.data} cannot start on this node or store; nothing was recorded or changed. */
    public static final class ClusterDataModeException extends IllegalStateException {
        private final String action;

        ClusterDataModeException(String message, String action) {
            super(message);
            this.action = action;
        }

        /** What to do about it. */
        public String action() {
            return action;
        }
    }
}
