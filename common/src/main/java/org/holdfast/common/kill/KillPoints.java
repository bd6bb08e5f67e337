package org.holdfast.common.kill;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The registry of named kill points, in the spirit of RocksDB's {@code db_crashtest} kill points.
 * Every point is declared here, once, with a description; code calls {@link #hit(KillPoint)} where
 * it stands. Disarmed (always in production), a hit costs one volatile read and allocates nothing.
 *
 * <p>A child JVM is armed with the system property {@value #PROPERTY}{@code =name[,count]}: the
 * {@code count}-th hit of that point (first by default) prints one line naming it on stderr and
 * halts the JVM at once ({@link Runtime#halt}, exit status {@value #HALT_STATUS}: no shutdown hook,
 * no flush, no close, as SIGKILL would). A unit test arms a point in-process with {@link #arm}
 * and {@link Mode#THROW}: the hit throws {@link Killed} and the test abandons what it was doing, as
 * a crash would.
 */
public final class KillPoints {
    /** The system property that arms a point in a child JVM: {@code name} or {@code name,count}. */
    public static final String PROPERTY = "holdfast.kill-point";
    /** Exit status of a JVM halted at a kill point. */
    public static final int HALT_STATUS = 86;
    /** The line prefix a halted JVM prints on stderr, followed by the point's name. */
    public static final String HALT_MESSAGE = "holdfast: halted at kill point ";

    private static final Map<String, KillPoint> REGISTRY = new LinkedHashMap<>();

    /** After the synced catalog batch that records a volume deletion and deletes its snapshot records. */
    public static final KillPoint GC_DELETE_VOLUME_AFTER_CATALOG_BATCH = declare("gc.deleteVolume.afterCatalogBatch",
            "volume deletion: the operation and the snapshot records' deletion are durable in the catalog, the GC log has nothing yet");
    /** After a volume deletion's operation is durable in the GC log, before its map goes. */
    public static final KillPoint GC_DELETE_VOLUME_AFTER_GC_LOG = declare("gc.deleteVolume.afterGcLog",
            "volume deletion: the release is durable in the GC log, the volume's map and record are still in the catalog");
    /** After the synced catalog batch of a snapshot commit, before the GC log has the commit. */
    public static final KillPoint COMMIT_AFTER_CATALOG_BATCH = declare("commit.afterCatalogBatch",
            "snapshot commit: the snapshot, its map delta and its GC records are durable in the catalog; the GC log has not applied it");
    /** After a large commit wrote one chunk of its map entries, before its switch batch. */
    public static final KillPoint COMMIT_AFTER_MAP_CHUNK = declare("commit.afterMapChunk",
            "snapshot commit in chunks: some of the new snapshot's map entries and its commit mark are written (not synced); no snapshot record, the volume's latest sequence unchanged");
    /** After one part of a large commit's GC bookkeeping was handed to the GC log, more parts follow. */
    public static final KillPoint COMMIT_AFTER_GC_PART = declare("commit.afterGcPart",
            "snapshot commit in parts: the catalog batch is durable; some of the commit's GC operations are in the GC log, the rest are not");
    /** After a compaction copied a log's live records to its {@code .compact} file, before the switch. */
    public static final KillPoint COMPACTION_AFTER_COPY = declare("compaction.afterCopy",
            "compaction: L.compact holds the live records and is forced; the locations still name the old log L");
    /** After compaction sealed a sparse active data log (rolled to a new one), before the sync that makes it compactable. */
    public static final KillPoint COMPACTION_AFTER_ROLL = declare("compaction.afterRoll",
            "compaction: the sparse active log L is sealed and an empty log L+1 exists; the durable point still lies in L");
    /** After compaction sealed a sparse active data log and synced, before it is compacted. */
    public static final KillPoint COMPACTION_AFTER_SEAL = declare("compaction.afterSeal",
            "compaction: the sparse active log L is sealed and indexed, the durable point lies in L+1; L is not compacted yet");
    /** After a compaction's switch, before the intent is cleared. */
    public static final KillPoint COMPACTION_AFTER_SWITCH = declare("compaction.afterSwitch",
            "compaction: the new locations and the intent are durable and L.compact is renamed over L; the intent is not cleared");
    /** After reclaim-now freed one batch of unreferenced blocks. */
    public static final KillPoint RECLAIM_AFTER_FREE_BATCH = declare("reclaim.afterFreeBatch",
            "reclaim-now: one batch of unreferenced blocks is freed (tombstones and checkpoint written), more batches follow");
    /** After a GC metadata rebuild wrote one GMA chunk of its new directory. */
    public static final KillPoint GC_REBUILD_AFTER_CHUNK = declare("gc.rebuild.afterChunk",
            "GC metadata rebuild: some chunks of gc.rebuild/ are written; gc/ is untouched");
    /** After a GC metadata rebuild wrote every chunk, before its log and verification. */
    public static final KillPoint GC_REBUILD_BEFORE_VERIFY = declare("gc.rebuild.beforeVerify",
            "GC metadata rebuild: gc.rebuild/ has every chunk but no log yet; gc/ is untouched");
    /** Between the two renames of a GC metadata rebuild's swap. */
    public static final KillPoint GC_REBUILD_BETWEEN_RENAMES = declare("gc.rebuild.betweenRenames",
            "GC metadata rebuild: the old gc/ is renamed aside, the verified gc.rebuild/ is not yet renamed to gc/");
    /** After a bad block's repair appended the uploaded copy, before it is durable. */
    public static final KillPoint REPAIR_AFTER_APPEND = declare("repair.afterAppend",
            "bad-block repair: the new copy is appended to the active data log (not forced); the PBN's location still names the bad copy");
    /** After the data log holding a repair's new copy is forced, before the PBN's location switches. */
    public static final KillPoint REPAIR_BEFORE_SWITCH = declare("repair.beforeSwitch",
            "bad-block repair: the new copy is forced to its data log but lies past the durable point; the location and the bad mark are unchanged");
    /** After the synced batch that switched a repaired PBN's location and cleared its bad mark. */
    public static final KillPoint REPAIR_AFTER_SWITCH = declare("repair.afterSwitch",
            "bad-block repair: the PBN's location names the new copy and its bad mark is gone (durable); the in-memory registry still lists it");

    /** After the GC log's trim started an empty segment at the checkpoint, before the older segments are deleted. */
    public static final KillPoint GC_LOG_TRIM_AFTER_NEW_SEGMENT = declare("gc.logTrim.afterNewSegment",
            "GC log trim: every record is committed and checkpointed; an empty segment at the checkpoint exists, the older ones are not deleted yet");
    /** In a GMA sync: the double-write journal is forced and the first chunk is written in place, not forced. */
    public static final KillPoint GC_GMA_MID_SYNC = declare("gc.gma.midSync",
            "GMA sync: the double-write journal is forced and one chunk is written in place (not forced), the others not yet; the next start writes the journal's chunks in place");
    /** Backend s3: after a sealed log's create-only PUT answered, before its upload is confirmed in the catalog. */
    public static final KillPoint OBJECTS_UPLOAD_AFTER_PUT = declare("objects.upload.afterPut",
            "log upload (backend s3): the sealed log's object is in the store; the catalog has no upload record, so the next start uploads it again (412) and takes it by its size");

    /** After a compaction on an object store uploaded the compacted copy under its new key, before the switch. */
    public static final KillPoint OBJECT_COMPACTION_AFTER_UPLOAD = declare("object.compaction.afterUpload",
            "compaction on objects: L.compact is uploaded under a new epoch's key with a synced intent to delete it; locations and the upload record still name the old log and object");
    /** After an intent to delete an object is durable, before its DELETE. */
    public static final KillPoint OBJECT_RETIRE_BEFORE_DELETE = declare("object.retire.beforeDelete",
            "object deletion: the intent naming the object (a dead log's, or one a compaction replaced) is durable; the object is still in the store");
    /** After an object's DELETE, before its intent (and a dead log's upload record) is removed. */
    public static final KillPoint OBJECT_RETIRE_AFTER_DELETE = declare("object.retire.afterDelete",
            "object deletion: the object is gone from the store; its intent and, for a dead log, the upload record are still in the catalog");

    private static volatile Armed armed;
    private static final Set<String> REACHED = ConcurrentHashMap.newKeySet();

    static {
        String spec = System.getProperty(PROPERTY);
        if (spec != null && !spec.isBlank()) {
            armFromSpec(spec, Mode.HALT);
        }
    }

    private KillPoints() {
    }

    /** What an armed point does when it is reached. */
    public enum Mode {
        /** Halts the JVM at once (child JVMs). */
        HALT,
        /** Throws {@link Killed} (in-process unit tests). */
        THROW
    }

    /** Thrown at an armed point in {@link Mode#THROW}; the test abandons the work as a crash would. */
    public static final class Killed extends RuntimeException {
        private final KillPoint point;

        Killed(KillPoint point) {
            super("killed at " + point.name());
            this.point = point;
        }

        public KillPoint point() {
            return point;
        }
    }

    private static KillPoint declare(String name, String description) {
        KillPoint p = new KillPoint(name, description);
        if (REGISTRY.putIfAbsent(name, p) != null) {
            throw new IllegalStateException("kill point " + name + " is declared twice");
        }
        return p;
    }

    /** Every declared point, in declaration order. */
    public static List<KillPoint> all() {
        return Collections.unmodifiableList(new ArrayList<>(REGISTRY.values()));
    }

    /** The point of that name, if declared. */
    public static Optional<KillPoint> named(String name) {
        return Optional.ofNullable(REGISTRY.get(name));
    }

    /** Marks the place of {@code point}; does nothing unless it is the armed point's {@code count}-th hit. */
    public static void hit(KillPoint point) {
        Armed a = armed;
        if (a != null && a.point == point) {
            a.reached();
        }
    }

    /** Arms {@code point}: its {@code count}-th hit from now kills (as {@code mode} says). Replaces any armed point. */
    public static void arm(KillPoint point, int count, Mode mode) {
        if (count < 1) {
            throw new IllegalArgumentException("kill point count must be at least 1, got " + count);
        }
        armed = new Armed(point, count, mode);
    }

    /** Arms from a {@code name[,count]} spec, as {@value #PROPERTY} gives it. */
    public static KillPoint armFromSpec(String spec, Mode mode) {
        String[] parts = spec.strip().split(",", 2);
        KillPoint p = named(parts[0].strip()).orElseThrow(() -> new IllegalArgumentException(
                "unknown kill point '" + parts[0].strip() + "' in " + PROPERTY + "; known points: " + REGISTRY.keySet()));
        int count;
        try {
            count = parts.length == 2 ? Integer.parseInt(parts[1].strip()) : 1;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("kill point count in '" + spec + "' is not a number", e);
        }
        arm(p, count, mode);
        return p;
    }

    /** Disarms; no hit kills afterwards. */
    public static void disarm() {
        armed = null;
    }

    /** The armed point, if any (for a start-up log line). */
    public static Optional<KillPoint> armedPoint() {
        Armed a = armed;
        return a == null ? Optional.empty() : Optional.of(a.point);
    }

    /** Names of the points that killed in this JVM ({@link Mode#THROW}), for coverage reports of in-process tests. */
    public static Set<String> reached() {
        return Collections.unmodifiableSet(REACHED);
    }

    private static final class Armed {
        final KillPoint point;
        final Mode mode;
        final AtomicInteger remaining;

        Armed(KillPoint point, int count, Mode mode) {
            this.point = point;
            this.mode = mode;
            this.remaining = new AtomicInteger(count);
        }

        void reached() {
            if (remaining.decrementAndGet() != 0) {
                return;
            }
            REACHED.add(point.name());
            if (mode == Mode.HALT) {
                System.err.println(HALT_MESSAGE + point.name());
                System.err.flush();
                Runtime.getRuntime().halt(HALT_STATUS);
            }
            armed = null; // a killed process does nothing more; in-process, the next run is not killed again
            throw new Killed(point);
        }
    }
}
