package org.holdfast.server.ingest;

import java.lang.System.Logger.Level;
import org.holdfast.common.hash.PossessionProof;
import org.holdfast.common.id.Fingerprint;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.model.Consistency;
import org.holdfast.common.protocol.BackupMode;
import org.holdfast.common.protocol.Blocks;
import org.holdfast.common.protocol.Committed;
import org.holdfast.common.protocol.Entries;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.FullReason;
import org.holdfast.common.protocol.Need;
import org.holdfast.common.protocol.ProtocolException;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.server.catalog.CommittedSnapshot;
import org.holdfast.server.catalog.SessionMap;
import org.holdfast.server.catalog.SnapshotCommit;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.engine.DedupDomain;
import org.holdfast.server.engine.DedupStream;
import org.holdfast.server.engine.DedupUnavailableException;
import org.holdfast.server.store.BlockHome;

/**
 * One backup of one volume, from BACKUP_READY to COMMITTED (or its abandonment).
 *
 * <h2>What happens to an ENTRIES run</h2>
 * Each entry is first compared with the volume's current map: an unchanged LBN (same PBN's
 * fingerprint, or zero staying zero) is dropped at once, so a full-mode backup costs memory only
 * for what changed. A changed zero block is resolved to PBN 0. The remaining entries form input
 * segments (runs of consecutive LBNs, at most U_segment long) that go through the engine's
 * {@link DedupStream#lookup}. A miss is asked for in NEED unless this session already asked for
 * the same fingerprint: then the entry <em>follows</em> the entry that owns it and gets its PBN
 * at commit. So every unknown fingerprint is uploaded once per session.
 *
 * <h2>Proof of possession and dedup domains</h2>
 * A hit of the engine counts as a duplicate only if the entry's possession tag matches the tag
 * computed from the stored possession fingerprint (pf) of that PBN with this session's secret
 * ({@link PossessionProof}). Otherwise (wrong or missing tag, or a block stored before pfs
 * existed) the entry is asked for in NEED like a miss, with the PBN kept as its
 * <em>candidate</em>: once the payload arrives and hashes to the fingerprint, the entry refers to
 * the candidate (no second copy) and the candidate's pf is recorded. So an agent that knows only
 * fingerprints gets a reference to no block it did not upload. An LBN unchanged since the
 * volume's own parent snapshot needs no proof: it never reaches the engine.
 *
 * <p>The engine sees {@link DedupDomain} keys, never fingerprints of a non-default domain; the
 * parent comparison, payload verification and the data store use the real fingerprints.
 *
 * <h2>Order of durability at COMMIT</h2>
 * every store landed (its PBNs known, {@link StoreWindow}) → data store sync → possession index (pfs and domain keys of blocks stored or proven) →
 * {@link DedupStream#record} of every segment (blocks now durable) →
 * {@link SnapshotCommit} (one synced batch) → reference guard release → index flush. A crash at
 * any point leaves either no snapshot or a complete one, and never an index entry pointing at a
 * lost block.
 *
 * <h2>Bounded memory</h2>
 * The entry arrays hold only the tail of the session: once they reach the {@link SessionSpill}'s
 * {@code memoryEntries}, a <em>checkpoint</em> takes the longest prefix of whole, resolved
 * segments, makes it durable in the same order as COMMIT does (data store sync → possession index
 * → {@link DedupStream#record}), moves its LBN → PBN pairs to the {@link SessionMap} (which spills
 * to disk) and drops it from the arrays. That is what {@link #abandon} already does for finished
 * blocks, so no snapshot or map entry becomes visible before COMMIT. A later duplicate of a
 * block dropped this way is found through the engine instead of the session's request table.
 *
 * <h2>Parts</h2>
 * The session coordinates; each part has one job: {@link BackupModeChoice} (incremental or full),
 * {@link ParentComparison} (each run against the parent's map), {@link SessionEntries} (the entry
 * arrays, input segments and request table), {@link InputSegmentLookup} (engine lookup, proof and
 * protection of hits), {@link PayloadIntake} (BLOCKS: verify, prove, repair via {@link RepairTarget},
 * store via the {@link StoreWindow}), {@link ProvenBlocks} (pfs for the possession index) and
 * {@link SegmentRecorder} (teaching the engine). The order of durability above is kept here.
 *
 * <p>Confined to its connection's serial lane: not thread-safe, needs no locks.
 */
public final class BackupSession {
    private static final System.Logger LOG = System.getLogger(BackupSession.class.getName());

    private final long id;
    private final VolumeId volume;
    private final int blockSize;
    private final long beginBlockCount;
    private final long parentSequence;
    private final BackupModeChoice modeChoice;
    private final IngestServices services;
    // where this session's blocks go and its parent's fingerprints come from (services.blocks())
    private final BlockHome blocks;
    private final DedupStream stream;
    private final DedupDomain domain;
    // null for a new volume
    private final ParentComparison parent;
    // the session's entries that differ from the parent, since the last checkpoint
    private final SessionEntries entries;
    private final InputSegmentLookup lookup;
    private final PayloadIntake intake;
    // this session's appends of new blocks, some of which may wait for their PBNs (the intake's)
    private final StoreWindow window;
    private final ProvenBlocks proven;
    private final SegmentRecorder recorder;
    // the session's finished entries dropped from the arrays at checkpoints (spills to disk)
    private final SessionMap done;
    private final int memoryEntries;
    private long nextCheckpoint;

    // the newest sequence the agent's state names; the commit's sequence goes past it (SequenceFloor)
    private final long claimedSequence;
    private long nextLbn;
    private boolean ended;
    private boolean recorded;

    BackupSession(long id, VolumeId volume, int blockSize, long volumeBytes, VolumeRecord existing, IngestServices services,
                  int segmentMax, long baseSequence, byte[] possessionSecret, String domain, SessionSpill spill) {
        this(id, volume, blockSize, volumeBytes, existing, services, segmentMax, baseSequence, 0, possessionSecret, domain, spill);
    }

    /**
     * A session whose agent's state describes snapshot {@code baseSequence} with identity
     * {@code baseSnapshotId} (0: unknown, as from an agent before protocol 5).
     */
    BackupSession(long id, VolumeId volume, int blockSize, long volumeBytes, VolumeRecord existing, IngestServices services,
                  int segmentMax, long baseSequence, long baseSnapshotId, byte[] possessionSecret, String domain,
                  SessionSpill spill) {
        this.id = id;
        this.memoryEntries = spill.memoryEntries();
        this.nextCheckpoint = memoryEntries;
        this.volume = volume;
        this.blockSize = blockSize;
        this.beginBlockCount = ProtocolLimits.blockCount(volumeBytes, blockSize);
        this.parentSequence = existing == null ? 0 : existing.latestSequence();
        this.claimedSequence = baseSequence;
        this.modeChoice = BackupModeChoice.of(services, existing, volume, baseSequence, baseSnapshotId);
        this.services = services;
        this.blocks = services.blocks().forSession();
        this.domain = new DedupDomain(existing != null ? existing.domain() : domain);
        this.entries = new SessionEntries(segmentMax);
        this.proven = new ProvenBlocks(services.dataStore().possession(), this.domain);
        this.intake = new PayloadIntake(id, blockSize, services, blocks, entries, proven,
                new RepairTarget(id, entries, this.domain, services));
        this.window = intake.window();
        this.parent = existing == null ? null
                : new ParentComparison(services.catalog().mapCursor(existing.internalId()), parentSequence, blocks);
        try {
            this.stream = services.index().openStream(volume.name());
            SegmentScratch scratch = SegmentScratch.of(segmentMax);
            this.lookup = new InputSegmentLookup(id, entries, stream, this.domain, new PossessionProof(possessionSecret), services, scratch,
                    segmentMax);
            this.recorder = new SegmentRecorder(entries, this.domain, blocks, scratch);
            this.done = spill.newMap(id);
        } catch (RuntimeException | Error e) {
            if (parent != null) {
                parent.close(); // its catalog iterator would otherwise hold the catalog's close for its full wait
            }
            throw e;
        }
    }

    public long id() {
        return id;
    }

    public VolumeId volume() {
        return volume;
    }

    public long parentSequence() {
        return parentSequence;
    }

    public BackupMode mode() {
        return modeChoice.mode();
    }

    /** Why the mode is full, for BACKUP_READY (protocol 5); {@link FullReason#UNSTATED} for an incremental. */
    public FullReason fullReason() {
        return modeChoice.fullReason();
    }

    public int blockSize() {
        return blockSize;
    }

    /** The dedup domain this session's blocks are shared within. */
    public String domain() {
        return domain.name();
    }

    /** Entries the engine matched whose possession was not proven (asked for instead). */
    public long unprovenMatches() {
        return lookup.unproven();
    }

    /** Handles one ENTRIES run and returns its NEED. */
    Need onEntries(Entries e) {
        long start = e.startLbn();
        int n = e.count();
        if (start < nextLbn) {
            throw new ProtocolException(ErrorCode.BAD_FRAME, "ENTRIES must be strictly increasing and not overlap: run starts at LBN "
                    + start + " but LBN " + (nextLbn - 1) + " was already sent");
        }
        if (start + n > beginBlockCount) {
            throw new ProtocolException(ErrorCode.LIMIT_EXCEEDED, "ENTRIES run " + start + ".." + (start + n - 1)
                    + " goes past the end of the volume (" + beginBlockCount + " blocks of " + blockSize + " bytes)");
        }
        if (n > ProtocolLimits.MAX_RUN_ENTRIES) {
            throw new ProtocolException(ErrorCode.LIMIT_EXCEEDED, "ENTRIES run of " + n + " entries; at most " + ProtocolLimits.MAX_RUN_ENTRIES);
        }
        nextLbn = start + n;
        if (entries.count >= nextCheckpoint) {
            checkpoint();
        }
        byte[] in = e.fingerprints();
        long[] inTags = e.tags();
        byte[] bitmap = new byte[Need.bitmapBytes(n)];
        int firstSegment = entries.segments;
        long previousLbn = -2;
        boolean hasParent = parent != null;
        if (hasParent) {
            parent.compare(start, n, in);
        }
        for (int i = 0; i < n; i++) {
            long lbn = start + i;
            int off = i * Fingerprint.BYTES;
            long before = hasParent ? parent.pbn(i) : 0;
            if (hasParent ? parent.zero(i) : ParentComparison.isZero(in, off)) {
                if (before != 0) {
                    entries.add(lbn, in, off, SessionEntries.RESOLVED, 0);
                }
                continue;
            }
            if (before != 0 && parent.sameAsParent(i, in, off) && !services.dataStore().badBlocks().isBad(before)) {
                continue; // unchanged since the parent (and its block is sound: a bad one is asked for, to repair it)
            }
            int idx = entries.add(lbn, in, off, SessionEntries.AWAITING, 0);
            entries.tags[idx] = inTags[i];
            entries.segment(idx, lbn == previousLbn + 1);
            previousLbn = lbn;
        }
        for (int s = firstSegment; s < entries.segments; s++) {
            lookup.lookup(s, start, bitmap);
        }
        return new Need(start, n, bitmap);
    }

    /** Verifies and stores the payloads of one BLOCKS frame, decoding and hashing them on this thread. */
    void onBlocks(Blocks b) {
        intake.onBlocks(b);
    }

    /**
     * Verifies and stores the payloads of one BLOCKS frame whose payloads {@link PayloadDigester}
     * already decoded and hashed: each digest must equal the fingerprint sent for its LBN in ENTRIES.
     */
    void onBlocks(Blocks b, PayloadDigester.FrameDigests d) {
        intake.onBlocks(b, d);
    }

    /** Bad blocks this session repaired with its uploads. */
    public long repairedBlocks() {
        return intake.repaired();
    }

    /** Commits the snapshot (see the class comment for the order) and ends the session. */
    Committed onCommit(long volumeBytes) {
        return onCommit(volumeBytes, Consistency.UNKNOWN);
    }

    /** COMMIT: makes the snapshot durable, recording what the agent said of its source's {@code consistency}. */
    Committed onCommit(long volumeBytes, Consistency consistency) {
        window.landAll(); // every block of the snapshot acknowledged by its home before the sync and the catalog batch
        if (entries.awaiting() > 0) {
            throw new ProtocolException(ErrorCode.BAD_STATE, "COMMIT before every NEED was answered: " + entries.awaiting()
                    + " payloads still missing");
        }
        if (volumeBytes < 0) {
            throw new ProtocolException(ErrorCode.BAD_FRAME, "COMMIT with a negative volume size");
        }
        blocks.sync();
        proven.record();
        for (int i = 0; i < entries.count; i++) {
            if (entries.state[i] == SessionEntries.FOLLOWS) {
                entries.resolveFollower(i);
            }
        }
        recorder.record(stream, entries.segments, false);
        recorded = true;
        for (int i = 0; i < entries.count; i++) {
            done.add(entries.lbns[i], entries.pbns[i]);
        }
        CommittedSnapshot c = services.snapshotCommit().commit(new SnapshotCommit.Request(volume, blockSize, volumeBytes, parentSequence,
                done, volumeBytes, intake.sentBlocks(), intake.newBlocks(), intake.storedBytes(), domain.name(), consistency,
                claimedSequence));
        blocks.committed();
        end(true);
        try {
            services.index().flush();
        } catch (RuntimeException e) {
            // the snapshot is durable; an index that forgets recent entries only costs dedup
            LOG.log(Level.WARNING, "session " + id + " of " + volume + ": index flush failed after commit: " + e.getMessage());
        }
        var s = c.snapshot();
        return new Committed(s.sequence(), s.createdAtMillis(), s.logicalBytes(), s.changedBlocks(), s.sentBlocks(), s.newBlocks(),
                s.storedBytes(), s.snapshotId());
    }

    /**
     * Ends a session that will not commit (ABORT, error, disconnect). Blocks it stored completely
     * are made durable and taught to the index, so the next backup need not upload them again; no
     * snapshot, no map entry changes.
     */
    void abandon() {
        if (ended) {
            return;
        }
        try {
            window.landWhatStored();
            if ((intake.newBlocks() > 0 || proven.size() > 0) && !recorded) {
                blocks.sync();
                proven.record();
                recordStoredSegments();
                services.index().flush();
            }
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "session " + id + " of " + volume + ": could not keep its stored blocks findable: " + e.getMessage());
        } finally {
            end(false);
        }
    }

    public boolean isEnded() {
        return ended;
    }

    /**
     * Teaches the engine the complete segments of an abandoned session. When a part of the index in
     * another process was lost (the likely reason the session ends), once more on a new stream over
     * the parts still there: else the rerun the agent is told to make uploads these blocks again.
     */
    private void recordStoredSegments() {
        try {
            recorder.record(stream, entries.segments, true);
        } catch (RuntimeException e) {
            if (!(e instanceof DedupUnavailableException || e.getCause() instanceof DedupUnavailableException)) {
                throw e;
            }
            try (DedupStream rest = services.index().openStream(volume.name())) {
                recorder.record(rest, entries.segments, true);
            }
        }
    }

    private void end(boolean committed) {
        if (ended) {
            return;
        }
        ended = true;
        try {
            services.referenceGuard().release(id, committed);
        } finally {
            stream.close();
            if (parent != null) {
                parent.close();
            }
            intake.close();
            done.close();
        }
    }

    /**
     * Moves the longest resolved prefix of whole segments out of the arrays (see the class comment).
     * Does nothing if the first entry still waits for its payload.
     */
    private void checkpoint() {
        window.landAll(); // the prefix dropped below must hold no entry a store in flight still names
        int k = entries.resolvedPrefix();
        int s = entries.segmentsWithin(k);
        // the next attempt after the arrays grew by half the bound again, so a slow agent cannot make each run pay a sync
        nextCheckpoint = Math.max(memoryEntries, entries.count + memoryEntries / 2L);
        if (k == 0) {
            return;
        }
        blocks.sync();
        proven.record();
        entries.resolveFollowersOf(k);
        recorder.record(stream, s, false);
        for (int i = 0; i < k; i++) {
            done.add(entries.lbns[i], entries.pbns[i]);
        }
        entries.dropPrefix(k, s);
        nextCheckpoint = Math.max(memoryEntries, entries.count + memoryEntries / 2L);
    }
}
