package org.holdfast.server.catalog;

import java.security.SecureRandom;
import java.time.Clock;
import java.util.function.BiConsumer;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.kill.KillPoints;
import org.holdfast.common.model.Consistency;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.MetadataBatch;

/**
 * Turns a finished backup session into a committed snapshot, atomically.
 *
 * <p>It compares each of the session's entries with the volume's newest map entry for that LBN and
 * keeps only those that differ (the delta); on a shrink, every LBN past the new end that still maps
 * a block gets a zero entry. Then one synced {@link MetadataBatch}, the switch, carries the delta's
 * map entries (keyed by the new sequence), the snapshot record, the volume record with its new
 * latest sequence (creating the volume on its first snapshot), and whatever the {@link CommitHook}
 * adds. Either all of it is visible or none. Work is proportional to the session's entries plus the
 * LBNs cut off by a shrink, never to the volume.
 *
 * <p>Memory does not grow with the commit: the delta spills beside the session's spill file
 * ({@link SnapshotDelta}), and a delta of more than {@code mapChunkEntries} entries writes its map
 * entries in chunk batches before the switch. Entries born after a volume's latest sequence are
 * invisible to every reader of a snapshot (they read at or below its sequence); the chunks carry a
 * mark ({@link CommitIntents}) by which the next start, or the next commit after a failure,
 * removes them if the switch never came.
 *
 * <p>Commits are serialised by this object (volume id allocation and the hook rely on it). The
 * caller must guarantee that no other session changes the same volume meanwhile (the ingest holds a
 * per-volume lock); the parent check below catches a violation.
 */
public final class SnapshotCommit {
    /** Map entries per chunk batch of a large commit by default (about 2.5 MiB of RocksDB batch). */
    public static final int DEFAULT_MAP_CHUNK_ENTRIES = 65_536;

    private final Catalog catalog;
    private final CommitHook hook;
    private final Clock clock;
    private final int mapChunkEntries;
    private final CommitIntents intents;
    private final SequenceFloor floors;
    // snapshot identities: unguessable and independent of the catalog's state, so a restored catalog hands out new ones
    private final SecureRandom ids = new SecureRandom();
    /** A commit failed after writing map chunks: its leftovers go before the next commit reads the map. */
    private boolean leftovers;

    public SnapshotCommit(Catalog catalog, CommitHook hook, Clock clock) {
        this(catalog, hook, clock, DEFAULT_MAP_CHUNK_ENTRIES);
    }

    /**
     * A commit writing a delta of more than {@code mapChunkEntries} map entries in chunks before its
     * final batch. Removes what commits that a crash stopped before their switch left behind, so it
     * must be created before the first commit (and before anything reads a volume's newest state).
     */
    public SnapshotCommit(Catalog catalog, CommitHook hook, Clock clock, int mapChunkEntries) {
        if (mapChunkEntries < 1) {
            throw new IllegalArgumentException("map entries per chunk must be at least 1, got " + mapChunkEntries);
        }
        this.catalog = catalog;
        this.hook = hook;
        this.clock = clock;
        this.mapChunkEntries = mapChunkEntries;
        this.intents = new CommitIntents(catalog);
        this.floors = new SequenceFloor(catalog.db());
        long removed = intents.removeLeftovers();
        if (removed > 0) {
            System.getLogger(SnapshotCommit.class.getName()).log(System.Logger.Level.INFO,
                    "removed " + removed + " map entries of a commit that a crash stopped before its switch");
        }
    }

    /**
     * What a session asks to commit. {@code parentSequence} is the latest sequence it started from (0 for a new volume);
     * {@code claimedSequence} the newest sequence the agent's state names (0: none), which the new sequence goes past
     * ({@link SequenceFloor}: a snapshot lost with a catalog restore keeps its id).
     */
    public record Request(VolumeId volume, int blockSize, long volumeBytes, long parentSequence, SessionMap entries,
                          long logicalBytes, long sentBlocks, long newBlocks, long storedBytes, String domain,
                          Consistency consistency, long claimedSequence) {
        /** A request whose agent named no newer snapshot than its parent. */
        public Request(VolumeId volume, int blockSize, long volumeBytes, long parentSequence, SessionMap entries,
                       long logicalBytes, long sentBlocks, long newBlocks, long storedBytes, String domain,
                       Consistency consistency) {
            this(volume, blockSize, volumeBytes, parentSequence, entries, logicalBytes, sentBlocks, newBlocks, storedBytes,
                    domain, consistency, 0);
        }

        /** A request whose snapshot's consistency the agent did not say. */
        public Request(VolumeId volume, int blockSize, long volumeBytes, long parentSequence, SessionMap entries,
                       long logicalBytes, long sentBlocks, long newBlocks, long storedBytes, String domain) {
            this(volume, blockSize, volumeBytes, parentSequence, entries, logicalBytes, sentBlocks, newBlocks, storedBytes,
                    domain, Consistency.UNKNOWN);
        }

        /** A request for a volume of the default dedup domain. */
        public Request(VolumeId volume, int blockSize, long volumeBytes, long parentSequence, SessionMap entries,
                       long logicalBytes, long sentBlocks, long newBlocks, long storedBytes) {
            this(volume, blockSize, volumeBytes, parentSequence, entries, logicalBytes, sentBlocks, newBlocks, storedBytes,
                    VolumeRecord.DEFAULT_DOMAIN);
        }
    }

    /**
     * Creates an empty volume (no snapshot yet, latest sequence 0) so that an operator can set it up
     * before its first backup; that backup must use {@code blockSize}, and its blocks go to
     * {@code domain}. Runs under this object's monitor because it allocates an internal id like a
     * first commit does. {@code extra} (may be null) adds more writes (settings) to the same batch.
     *
     * @throws VolumeExistsException if a volume of that name exists; nothing written
     */
    public synchronized VolumeRecord createVolume(VolumeId name, int blockSize, String domain, BiConsumer<MetadataBatch, VolumeRecord> extra) {
        if (!FormatVersions.isValidBlockSize(blockSize)) {
            throw new IllegalArgumentException("block size " + blockSize + " is not a power of two from " + FormatVersions.MIN_BLOCK_SIZE
                    + " to " + FormatVersions.MAX_BLOCK_SIZE);
        }
        if (catalog.volume(name).isPresent()) {
            throw new VolumeExistsException(name.name());
        }
        try (MetadataBatch batch = new MetadataBatch()) {
            long internalId = catalog.db().metaLong(FormatVersions.META_NEXT_VOLUME_ID, 1);
            catalog.db().putMetaLong(batch, FormatVersions.META_NEXT_VOLUME_ID, internalId + 1);
            VolumeRecord v = new VolumeRecord(name, internalId, blockSize, clock.millis(), 0, 0, domain);
            catalog.putVolume(batch, v);
            if (extra != null) {
                extra.accept(batch, v);
            }
            catalog.write(batch);
            return v;
        }
    }

    /**
     * Raises the floor of {@code volume} (read under this monitor) to the sequence {@code claimed} that its agent's
     * state names, if that is above both its newest sequence and its floor; clamped to
     * {@link SequenceFloor#MAX_AGENT_AHEAD} past the newest sequence. Durable (synced) before it returns. Returns the
     * floor now in force (0 for an unknown volume, which is left alone).
     */
    public synchronized long raiseFloor(VolumeId volume, long claimed) {
        VolumeRecord v = catalog.volume(volume).orElse(null);
        if (v == null) {
            return 0;
        }
        long floor = floors.of(v.internalId());
        long target = SequenceFloor.clampClaim(v.latestSequence(), claimed);
        if (target <= Math.max(floor, v.latestSequence())) {
            return floor;
        }
        System.Logger log = System.getLogger(SnapshotCommit.class.getName());
        if (target < claimed) {
            log.log(System.Logger.Level.WARNING, "volume " + volume + ": an agent's state names snapshot " + volume + "@" + claimed
                    + ", more than " + SequenceFloor.MAX_AGENT_AHEAD + " past the newest one (" + v.latestSequence()
                    + "); its next sequence goes past " + target + " only");
        } else {
            log.log(System.Logger.Level.INFO, "volume " + volume + ": an agent's state names snapshot " + volume + "@" + claimed
                    + ", newer than the newest one here (" + v.latestSequence() + ", as after a catalog restore); the next"
                    + " snapshot takes a sequence above it so that id is not handed out again");
        }
        try (MetadataBatch batch = new MetadataBatch()) {
            floors.put(batch, v.internalId(), target);
            catalog.write(batch);
        }
        return target;
    }

    /**
     * The commit's delta: in memory for an in-memory session map; for a spilling one, spilling
     * beside its file with the same memory bound (the file matches the session spill's name pattern,
     * so a crash's leftover is removed at the next start).
     */
    private static SnapshotDelta deltaFor(SessionMap entries) {
        if (entries.spillFile() == null) {
            return new SnapshotDelta((int) Math.min(entries.size(), 1 << 16));
        }
        String name = entries.spillFile().getFileName().toString();
        return new SnapshotDelta(entries.spillFile().resolveSibling(name.replaceFirst("\\.spill$", "") + "-delta.spill"),
                entries.bufferEntries());
    }

    /**
     * Commits and returns the new snapshot with its delta (readable after the return only if it
     * stayed in memory: a spilled delta's file is deleted once the commit is done).
     *
     * @throws CommitRejectedException if the parent moved, the block size differs or the entries are bad; nothing written
     */
    public synchronized CommittedSnapshot commit(Request r) {
        if (!FormatVersions.isValidBlockSize(r.blockSize())) {
            throw new CommitRejectedException(CommitRejectedException.Reason.BLOCK_SIZE_MISMATCH, "invalid block size " + r.blockSize());
        }
        if (r.volumeBytes() < 0) {
            throw new CommitRejectedException(CommitRejectedException.Reason.BAD_ENTRIES, "negative volume size");
        }
        if (leftovers) {
            intents.removeLeftovers();
            leftovers = false;
        }
        VolumeRecord existing = catalog.volume(r.volume()).orElse(null);
        long now = clock.millis();
        long internalId;
        long createdAt;
        long oldBlockCount;
        MetadataBatch first = new MetadataBatch();
        Chunks batch = new Chunks(first);
        try (batch) {
            if (existing == null) {
                if (r.parentSequence() != 0) {
                    throw new CommitRejectedException(CommitRejectedException.Reason.PARENT_MOVED,
                            "volume '" + r.volume() + "' does not exist but the session started from snapshot " + r.parentSequence());
                }
                internalId = catalog.db().metaLong(FormatVersions.META_NEXT_VOLUME_ID, 1);
                catalog.db().putMetaLong(first, FormatVersions.META_NEXT_VOLUME_ID, internalId + 1);
                createdAt = now;
                oldBlockCount = 0;
            } else {
                if (existing.blockSize() != r.blockSize()) {
                    throw new CommitRejectedException(CommitRejectedException.Reason.BLOCK_SIZE_MISMATCH,
                            "volume '" + r.volume() + "' has block size " + existing.blockSize() + ", not " + r.blockSize());
                }
                if (existing.latestSequence() != r.parentSequence()) {
                    throw new CommitRejectedException(CommitRejectedException.Reason.PARENT_MOVED,
                            "volume '" + r.volume() + "' is at snapshot " + existing.latestSequence() + ", the session started from " + r.parentSequence());
                }
                internalId = existing.internalId();
                createdAt = existing.createdAtMillis();
                oldBlockCount = existing.blockCount();
            }
            long floor = existing == null ? 0 : floors.of(internalId);
            long sequence = SequenceFloor.next(r.parentSequence(),
                    Math.max(floor, SequenceFloor.clampClaim(r.parentSequence(), r.claimedSequence())));
            batch.start(internalId, sequence);
            long newBlockCount = VolumeRecord.blockCount(r.volumeBytes(), r.blockSize());
            SessionMap entries = r.entries();
            SnapshotDelta delta = deltaFor(entries);
            try (delta) {
                try (MapCursor cursor = catalog.mapCursor(internalId); SessionMap.Cursor e = entries.cursor()) {
                    while (e.next()) {
                        long lbn = e.lbn();
                        if (lbn >= newBlockCount) {
                            break; // past the end the session itself committed: the shrink pass decides
                        }
                        long pbn = e.pbn();
                        if (existing != null) {
                            cursor.seekNewest(lbn);
                        }
                        long before = existing == null ? 0 : cursor.pbn();
                        long birth = existing == null ? 0 : cursor.birthSequence();
                        if (before != pbn) {
                            delta.add(lbn, before, birth, pbn);
                            batch.putMapEntry(lbn, pbn);
                        }
                    }
                    if (newBlockCount < oldBlockCount) {
                        cursor.startScan(Long.MAX_VALUE, newBlockCount, Long.MAX_VALUE);
                        while (cursor.nextMapped()) {
                            if (cursor.pbn() != 0) {
                                delta.add(cursor.lbn(), cursor.pbn(), cursor.birthSequence(), 0);
                                batch.putMapEntry(cursor.lbn(), 0);
                            }
                        }
                    }
                }
                SnapshotRecord snapshot = new SnapshotRecord(r.volume(), sequence, now, r.volumeBytes(), r.blockSize(),
                        r.logicalBytes(), delta.size(), r.sentBlocks(), r.newBlocks(), r.storedBytes(), r.consistency(), newSnapshotId());
                // The domain is fixed when the volume is created; later requests cannot move it.
                String domain = existing == null ? r.domain() : existing.domain();
                VolumeRecord volume = new VolumeRecord(r.volume(), internalId, r.blockSize(), createdAt, sequence, r.volumeBytes(), domain);
                MetadataBatch last = batch.last();
                catalog.putSnapshot(last, internalId, snapshot);
                catalog.putVolume(last, volume);
                CommittedSnapshot committed = new CommittedSnapshot(volume, snapshot, delta);
                CommitHook.AfterCommit after = hook.onCommit(committed, last);
                catalog.write(last); // the switch: with it the snapshot, its map entries and its GC records are visible
                batch.switched();
                KillPoints.hit(KillPoints.COMMIT_AFTER_CATALOG_BATCH);
                after.run();
                return committed;
            }
        }
    }

    /** A random non-zero snapshot identity (0 means unknown). */
    private long newSnapshotId() {
        long id;
        do {
            id = ids.nextLong();
        } while (id == 0);
        return id;
    }

    /**
     * The commit's batches: map entries go into the current batch; once it holds
     * {@code mapChunkEntries} of them it is written (not synced: the final batch's sync makes it
     * durable, and the write-ahead log keeps the order) and a new one starts. The first chunk
     * written carries the commit's mark (and a new volume's id counter), so a crash before the
     * switch leaves entries that {@link CommitIntents#removeLeftovers} can find. The last batch,
     * never written here, is the switch.
     */
    private final class Chunks implements AutoCloseable {
        private MetadataBatch current;
        private long volume;
        private long sequence;
        private long inBatch;
        private boolean wrote;
        private boolean switched;

        Chunks(MetadataBatch first) {
            this.current = first;
        }

        void start(long volume, long sequence) {
            this.volume = volume;
            this.sequence = sequence;
        }

        void putMapEntry(long lbn, long pbn) {
            if (inBatch == mapChunkEntries) {
                if (!wrote) {
                    intents.put(current, volume, sequence);
                    wrote = true;
                }
                catalog.db().write(current, false);
                current.close();
                current = new MetadataBatch();
                inBatch = 0;
                KillPoints.hit(KillPoints.COMMIT_AFTER_MAP_CHUNK);
            }
            catalog.putMapEntry(current, volume, lbn, sequence, pbn);
            inBatch++;
        }

        /** The batch that becomes the switch; it also removes the mark if chunks were written. */
        MetadataBatch last() {
            if (wrote) {
                intents.delete(current, volume);
            }
            return current;
        }

        void switched() {
            switched = true;
        }

        @Override
        public void close() {
            current.close();
            if (wrote && !switched) {
                leftovers = true; // failed between its first chunk and the switch: clean before the next commit
            }
        }
    }
}
