package org.holdfast.server.ingest;

import java.lang.System.Logger.Level;
import java.util.Arrays;
import org.holdfast.common.compress.BlockCodec;
import org.holdfast.common.hash.BlockHasher;
import org.holdfast.common.hash.PossessionProof;
import org.holdfast.common.id.Fingerprint;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.model.Consistency;
import org.holdfast.common.protocol.BackupMode;
import org.holdfast.common.protocol.FullReason;
import org.holdfast.common.protocol.Blocks;
import org.holdfast.common.protocol.Committed;
import org.holdfast.common.protocol.Entries;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.Need;
import org.holdfast.common.protocol.PayloadCodec;
import org.holdfast.common.protocol.ProtocolException;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.server.catalog.CommittedSnapshot;
import org.holdfast.server.catalog.MapCursor;
import org.holdfast.server.catalog.SessionMap;
import org.holdfast.server.catalog.SnapshotCommit;
import org.holdfast.server.catalog.SnapshotRecord;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.engine.DedupDomain;
import org.holdfast.server.engine.DedupStream;
import org.holdfast.server.engine.DedupUnavailableException;
import org.holdfast.server.store.BlockHome;
import org.holdfast.server.store.BlocksUnavailableException;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.StoredBlock;
import org.holdfast.server.store.VerifyLedger;
import org.holdfast.server.verify.DamageReport;

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
 * <p>Confined to its connection's serial lane: not thread-safe, needs no locks.
 */
public final class BackupSession {
    private static final System.Logger LOG = System.getLogger(BackupSession.class.getName());

    private static final byte RESOLVED = 0;
    private static final byte AWAITING = 1;
    private static final byte FOLLOWS = 2;
    // its payload checked and sent to be stored, its PBN not known yet (StoreWindow)
    private static final byte STORING = 3;
    private static final int PARENT_SCAN_STEP_LIMIT = 64;

    private final long id;
    private final VolumeId volume;
    private final int blockSize;
    private final long beginBlockCount;
    private final long parentSequence;
    private final BackupMode mode;
    private final FullReason fullReason;
    private final IngestServices services;
    // where this session's blocks go and its parent's fingerprints come from (services.blocks())
    private final BlockHome blocks;
    // this session's appends of new blocks, some of which may wait for their PBNs
    private final StoreWindow window;
    private final int segmentMax;
    private final DedupStream stream;
    private final DedupDomain domain;
    private final PossessionProof proof;
    private final MapCursor parentCursor;
    private final BlockCodec codec = new BlockCodec();
    private final BlockHasher hasher = new BlockHasher();
    // the current ENTRIES run against the parent (scratch, MAX_RUN_ENTRIES each)
    private final boolean[] zeroes;
    private final long[] parentPbns;
    private final long[] lookupPbns;
    private final byte[] parentFps;
    private final boolean[] parentFound;
    private final boolean[] lookupScratch;
    // ordered scan of the parent's map: stands on parentScanLbn (its PBN parentScanPbn), or is done
    private boolean parentScanOpen;
    private boolean parentScanDone;
    private long parentScanLbn;
    private long parentScanPbn;
    private long parentScanTarget = -1;

    // the session's entries that differ from the parent, in LBN order (parallel arrays)
    private int count;
    private long[] lbns = new long[1024];
    private byte[] fps = new byte[1024 * Fingerprint.BYTES];
    private long[] pbns = new long[1024];
    private byte[] state = new byte[1024];
    private boolean[] isNew = new boolean[1024];
    private int[] owner = new int[1024];
    private long[] tags = new long[1024];
    private long[] candidate = new long[1024]; // a matched PBN whose possession was not proven (0: none)
    private long[] repair = new long[1024]; // a matched PBN marked bad: the upload repairs it (0: none)
    private long[] storingWorker = new long[1024]; // where the block goes if stored: the lookup's storing worker (member id)
    // input segments: [segStart[s], segStart[s] + segLen[s]) of the entry arrays
    private int segments;
    private int[] segStart = new int[64];
    private int[] segLen = new int[64];
    private FingerprintTable requested = new FingerprintTable(1024);
    private int awaiting;
    // the session's finished entries dropped from the arrays at checkpoints (spills to disk)
    private final SessionMap done;
    private final int memoryEntries;
    private long nextCheckpoint;

    private long nextLbn;
    private long sentBlocks;
    private long newBlocks;
    private long storedBytes;
    private long repaired;
    private boolean ended;
    private boolean recorded;

    // scratch, reused for every segment and block
    private final byte[] segFps;
    private final long[] segPbns;
    private final boolean[] segNew;
    private final long[] segWorkers;
    private final long[] protect;
    private final int[] protectIdx;
    private final byte[] payload = new byte[ProtocolLimits.MAX_PAYLOAD];
    private final byte[] raw;
    private byte[] frameRaw; // made on first need: most sessions let the digest pool decode their frames
    // the entry index and fingerprint of each member of the frame being checked, in member order
    private final int[] frameIdx = new int[ProtocolLimits.MAX_BLOCKS_PER_FRAME];
    private final byte[] frameFps = new byte[ProtocolLimits.MAX_BLOCKS_PER_FRAME * Fingerprint.BYTES];
    private final long[] pfScratch = new long[2];
    private final byte[] segPfs;
    private final boolean[] segPfFound;
    private final byte[] pfKey = new byte[8];
    private final byte[] pfValue = new byte[org.holdfast.server.store.PossessionIndex.WITH_KEY_BYTES];
    private final StoredBlock candidateScratch = new StoredBlock();
    // possession fingerprints (and domain keys) to record: blocks stored, and candidates proven, by this session
    private int proven;
    private long[] provenPbns = new long[256];
    private byte[] provenPfs = new byte[256 * PossessionProof.PF_BYTES];
    private byte[] provenKeys = new byte[256 * Fingerprint.BYTES];
    private long unproven;

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
        // an incremental backup resends no unchanged LBN, so a bad block the parent carries would stay bad: ask for a full one
        boolean sameSnapshot = baseSequence == parentSequence && sameIdentity(services, existing, volume, baseSnapshotId);
        long damagedInParent = existing == null || !sameSnapshot ? 0 : damagedBlocks(services, existing);
        this.mode = sameSnapshot && damagedInParent == 0 ? BackupMode.INCREMENTAL : BackupMode.FULL;
        this.fullReason = mode == BackupMode.INCREMENTAL ? FullReason.UNSTATED
                : baseSequence != parentSequence ? FullReason.BASE_NOT_NEWEST
                : !sameSnapshot ? FullReason.IDENTITY_MISMATCH
                : FullReason.DAMAGED_BLOCKS;
        if (damagedInParent > 0) {
            LOG.log(Level.WARNING, "backup of volume " + volume + ": its latest snapshot " + volume + "@" + parentSequence
                    + " references " + damagedInParent + " damaged blocks; asking the agent for a full backup, which re-reads"
                    + " the volume and repairs them");
        }
        this.services = services;
        this.blocks = services.blocks().forSession();
        this.window = new StoreWindow(blocks, this::landed, services.referenceGuard(), id);
        this.segmentMax = segmentMax;
        this.segFps = new byte[segmentMax * Fingerprint.BYTES];
        this.segPbns = new long[segmentMax];
        this.segNew = new boolean[segmentMax];
        this.segWorkers = new long[segmentMax];
        this.segPfs = new byte[segmentMax * PossessionProof.PF_BYTES];
        this.segPfFound = new boolean[segmentMax];
        this.proof = new PossessionProof(possessionSecret);
        this.domain = new DedupDomain(existing != null ? existing.domain() : domain);
        this.protect = new long[Math.max(segmentMax, ProtocolLimits.MAX_BLOCKS_PER_FRAME)];
        this.protectIdx = new int[segmentMax];
        this.raw = new byte[blockSize];
        this.parentCursor = existing == null ? null : services.catalog().mapCursor(existing.internalId());
        int run = parentCursor == null ? 0 : ProtocolLimits.MAX_RUN_ENTRIES;
        this.zeroes = new boolean[run];
        this.parentPbns = new long[run];
        this.lookupPbns = new long[run];
        this.parentFps = new byte[run * Fingerprint.BYTES];
        this.parentFound = new boolean[run];
        this.lookupScratch = new boolean[run];
        this.stream = services.index().openStream(volume.name());
        this.done = spill.newMap(id);
    }

    /**
     * False if the agent's base (which has the parent's sequence) is provably another snapshot: both
     * identities known and different. That happens after a catalog restore, when the sequence was
     * handed out again, and an incremental backup against it would be silently wrong. An unknown
     * identity on either side (0: an older agent, a snapshot stored before identities) trusts the
     * sequence, as before, so an upgrade does not force a full backup of every volume.
     */
    private static boolean sameIdentity(IngestServices services, VolumeRecord existing, VolumeId volume, long baseSnapshotId) {
        if (existing == null || baseSnapshotId == 0 || existing.latestSequence() == 0) {
            return true;
        }
        long parentId = services.catalog().snapshot(existing, existing.latestSequence()).map(SnapshotRecord::snapshotId).orElse(0L);
        if (parentId == 0 || parentId == baseSnapshotId) {
            return true;
        }
        LOG.log(Level.INFO, "backup of volume " + volume + ": full, because the agent's base snapshot " + volume + "@"
                + existing.latestSequence() + " has identity " + Long.toHexString(baseSnapshotId) + " but the server's "
                + volume + "@" + existing.latestSequence() + " is " + Long.toHexString(parentId)
                + " (identity mismatch: the sequence was handed out again, as after a catalog restore)");
        return false;
    }

    /** LBNs of the volume's newest snapshot known to map to a bad block; 0 (and a warning) if the verify records cannot be read. */
    private static long damagedBlocks(IngestServices services, VolumeRecord v) {
        if (services.dataStore().badBlocks().isEmpty()) {
            return 0; // the usual case, free
        }
        try {
            return new DamageReport(services.catalog(), services.dataStore().badBlocks(), new VerifyLedger(services.catalog().db()))
                    .referencedBy(v, v.latestSequence());
        } catch (CorruptDataException e) {
            // a damaged verify record must not stop backups; the next verify pass rewrites it
            LOG.log(Level.WARNING, "backup of volume " + v.name() + ": cannot tell whether its latest snapshot references damaged"
                    + " blocks (" + e.getMessage() + "); deciding incremental or full without it");
            return 0;
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
        return mode;
    }

    /** Why the mode is full, for BACKUP_READY (protocol 5); {@link FullReason#UNSTATED} for an incremental. */
    public FullReason fullReason() {
        return fullReason;
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
        return unproven;
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
        if (count >= nextCheckpoint) {
            checkpoint();
        }
        byte[] in = e.fingerprints();
        long[] inTags = e.tags();
        byte[] bitmap = new byte[Need.bitmapBytes(n)];
        int firstSegment = segments;
        long previousLbn = -2;
        boolean hasParent = parentCursor != null;
        if (hasParent) {
            // the parent's PBN of every LBN of the run (one ordered map scan), then their fingerprints in one batch
            for (int i = 0; i < n; i++) {
                zeroes[i] = isZero(in, i * Fingerprint.BYTES);
                parentPbns[i] = parentPbn(start + i);
                lookupPbns[i] = zeroes[i] ? 0 : parentPbns[i];
            }
            blocks.fingerprints(lookupPbns, n, parentFps, parentFound, lookupScratch);
        }
        for (int i = 0; i < n; i++) {
            long lbn = start + i;
            int off = i * Fingerprint.BYTES;
            long before = hasParent ? parentPbns[i] : 0;
            if (hasParent ? zeroes[i] : isZero(in, off)) {
                if (before != 0) {
                    addEntry(lbn, in, off, RESOLVED, 0);
                }
                continue;
            }
            if (before != 0 && parentFound[i]
                    && Arrays.equals(parentFps, off, off + Fingerprint.BYTES, in, off, off + Fingerprint.BYTES)
                    && !services.dataStore().badBlocks().isBad(before)) {
                continue; // unchanged since the parent (and its block is sound: a bad one is asked for, to repair it)
            }
            int idx = addEntry(lbn, in, off, AWAITING, 0);
            tags[idx] = inTags[i];
            if (lbn == previousLbn + 1 && segLen[segments - 1] < segmentMax) {
                segLen[segments - 1]++;
            } else {
                addSegment(idx);
            }
            previousLbn = lbn;
        }
        for (int s = firstSegment; s < segments; s++) {
            lookupSegment(s, start, bitmap);
        }
        return new Need(start, n, bitmap);
    }

    private void lookupSegment(int s, long runStart, byte[] bitmap) {
        int from = segStart[s];
        int len = segLen[s];
        domain.keys(fps, from * Fingerprint.BYTES, segFps, 0, len);
        stream.lookup(segFps, len, segPbns);
        stream.storingWorkers(len, segWorkers);
        System.arraycopy(segWorkers, 0, storingWorker, from, len);
        services.dataStore().possession().pfs(segPbns, len, segPfs, segPfFound, pfKey, pfValue);
        int protectedCount = 0;
        for (int j = 0; j < len; j++) {
            int idx = from + j;
            long found = segPbns[j];
            if (found != 0) {
                protectIdx[protectedCount] = idx;
                protect[protectedCount++] = found;
                if (services.dataStore().badBlocks().isBad(found)) {
                    // never a duplicate of a bad block: ask for the payload, which then repairs the block in place
                    repair[idx] = found;
                    askFor(idx, runStart, bitmap);
                    continue;
                }
                if (segPfFound[j] && proof.tag(segPfs, j * PossessionProof.PF_BYTES) == tags[idx]) {
                    state[idx] = RESOLVED;
                    pbns[idx] = found;
                } else {
                    // not proven: ask for the payload; once it proves the content, refer to this PBN
                    candidate[idx] = found;
                    unproven++;
                    askFor(idx, runStart, bitmap);
                }
                continue;
            }
            askFor(idx, runStart, bitmap);
        }
        if (protectedCount > 0 && services.referenceGuard().protectOrRefuse(id, protect, 0, protectedCount) > 0) {
            // a concurrent sweep is reclaiming some matched blocks: treat them as misses and store them anew
            for (int k = 0; k < protectedCount; k++) {
                if (protect[k] == 0) {
                    int idx = protectIdx[k];
                    if (repair[idx] != 0) {
                        repair[idx] = 0; // already asked for; it will be stored anew
                    } else if (candidate[idx] != 0) {
                        candidate[idx] = 0; // already asked for; it will be stored anew
                    } else {
                        askFor(idx, runStart, bitmap);
                    }
                }
            }
        }
    }

    /** No usable stored copy of entry {@code idx}: follow an earlier request of the same block, or ask the agent. */
    private void askFor(int idx, long runStart, byte[] bitmap) {
        int o = requested.get(fps, idx * Fingerprint.BYTES, fps);
        if (o >= 0) {
            state[idx] = FOLLOWS;
            owner[idx] = o;
        } else {
            requested.put(idx, fps);
            state[idx] = AWAITING;
            awaiting++;
            Need.set(bitmap, (int) (lbns[idx] - runStart));
        }
    }

    /** Verifies and stores the payloads of one BLOCKS frame, decoding and hashing them on this thread. */
    void onBlocks(Blocks b) {
        PayloadDigester.FrameDigests d = new PayloadDigester.FrameDigests(b.count());
        PayloadDigester.digestInline(b, blockSize, 0, b.count(), d, codec, hasher, payload, hasFrame(b) ? frameRaw() : raw, pfScratch);
        onBlocks(b, d);
    }

    private static boolean hasFrame(Blocks b) {
        for (int i = 0; i < b.count(); i++) {
            if (b.codecs()[i] == PayloadCodec.ZSTD_FRAME) {
                return true;
            }
        }
        return false;
    }

    /** Scratch for one decoded compressed frame (up to 1 MiB), made on the first frame a session needs to decode here. */
    private byte[] frameRaw() {
        if (frameRaw == null) {
            frameRaw = new byte[ProtocolLimits.FRAME_MAX_RAW];
        }
        return frameRaw;
    }

    /**
     * Verifies and stores the payloads of one BLOCKS frame whose payloads {@link PayloadDigester}
     * already decoded and hashed: each digest must equal the fingerprint sent for its LBN in ENTRIES.
     */
    void onBlocks(Blocks b, PayloadDigester.FrameDigests d) {
        for (int i = 0; i < b.count(); i++) {
            if (b.codecs()[i] == PayloadCodec.ZSTD_FRAME) {
                int m = b.frameMembers(i);
                onFrame(b, d, i, m);
                i += m - 1;
                continue;
            }
            long lbn = b.lbns()[i];
            int idx = awaitedEntry(lbn);
            if (idx < 0) {
                throw new ProtocolException(ErrorCode.BAD_STATE, "BLOCKS carries LBN " + lbn + ", which the server did not ask for or already has");
            }
            ProtocolException bad = d.errorAt(i);
            if (bad != null) {
                throw bad;
            }
            int c = b.codecs()[i];
            int fpOff = idx * Fingerprint.BYTES;
            if (!Arrays.equals(d.digests, i * Fingerprint.BYTES, (i + 1) * Fingerprint.BYTES, fps, fpOff, fpOff + Fingerprint.BYTES)) {
                throw new ProtocolException(ErrorCode.FINGERPRINT_MISMATCH, "payload of LBN " + lbn
                        + " does not hash to the fingerprint sent for it in ENTRIES; the session is aborted and nothing is stored");
            }
            if (provenCandidate(idx, d.pfs, i * PossessionProof.PF_BYTES)) {
                continue;
            }
            int len = b.copyPayload(i, payload, 0);
            int storedCodec = c == PayloadCodec.ZSTD ? FormatVersions.CODEC_ZSTD : FormatVersions.CODEC_RAW;
            // Stored exactly as received; restore passes the same bytes back. The agent already tried
            // zstd on a raw payload (it sends raw only when zstd does not pay), so trying again here
            // would cost a compression per incompressible block for nothing.
            store(idx, payload, 0, len, storedCodec, d.pfs, i * PossessionProof.PF_BYTES);
        }
        // what the workers answered meanwhile, protected in one call as before the window; the rest lands later
        window.landAnswered();
        window.protectLanded();
    }

    /** The index of the entry of {@code lbn} if it waits for its payload, else -1. */
    private int awaitedEntry(long lbn) {
        int idx = Arrays.binarySearch(lbns, 0, count, lbn);
        return idx >= 0 && state[idx] == AWAITING ? idx : -1;
    }

    /**
     * The compressed frame of blocks {@code [i, i + m)}: every member must have been asked for and
     * hash to its fingerprint, or the whole frame is refused before anything of it is stored. A
     * frame of plain new blocks is stored as it came, as one frame; one with a member that proves a
     * stored candidate or repairs a bad block takes the per-block path, member by member.
     */
    private void onFrame(Blocks b, PayloadDigester.FrameDigests d, int i, int m) {
        long first = b.lbns()[i];
        boolean plain = true;
        for (int k = 0; k < m; k++) {
            long lbn = b.lbns()[i + k];
            int idx = awaitedEntry(lbn);
            if (idx < 0 || (k > 0 && lbn <= b.lbns()[i + k - 1])) {
                throw new ProtocolException(ErrorCode.BAD_STATE, "BLOCKS carries LBN " + lbn + " in the zstd frame of LBN " + first
                        + ", which the server did not ask for, already has or got twice; the whole frame is refused and nothing of it is stored");
            }
            frameIdx[k] = idx;
            plain &= candidate[idx] == 0 && repair[idx] == 0;
        }
        ProtocolException bad = d.errorAt(i);
        if (bad != null) {
            throw bad;
        }
        for (int k = 0; k < m; k++) {
            int fpOff = frameIdx[k] * Fingerprint.BYTES;
            int at = (i + k) * Fingerprint.BYTES;
            if (!Arrays.equals(d.digests, at, at + Fingerprint.BYTES, fps, fpOff, fpOff + Fingerprint.BYTES)) {
                throw new ProtocolException(ErrorCode.FINGERPRINT_MISMATCH, "block LBN " + b.lbns()[i + k] + " (member " + k
                        + " of the zstd frame of LBN " + first + ") does not hash to the fingerprint sent for it in ENTRIES; the whole"
                        + " frame is refused, nothing of it is stored, and the session is aborted");
            }
            System.arraycopy(fps, fpOff, frameFps, k * Fingerprint.BYTES, Fingerprint.BYTES);
        }
        var badBlocks = services.dataStore().badBlocks();
        for (int k = 0; plain && !badBlocks.isEmpty() && k < m; k++) {
            plain = badBlocks.holding(frameFps, k * Fingerprint.BYTES) == 0;
        }
        if (!plain) {
            onFrameMembers(b, d, i, m);
            return;
        }
        int len = b.copyPayload(i, payload, 0);
        long worker = storingWorker[frameIdx[0]];
        for (int k = 0; k < m; k++) {
            int idx = frameIdx[k];
            storingWorker[idx] = worker; // the whole frame is in the first member's worker's range: its index learns them all
            state[idx] = STORING;
        }
        window.appendFrame(worker, frameFps, 0, m, payload, 0, len, blockSize, frameIdx, d.pfs, i * PossessionProof.PF_BYTES);
        storedBytes += len;
    }

    /**
     * The rare path of a verified frame: decodes it again here and handles each member like a single
     * block (proving a candidate, repairing a bad block, or stored alone, compressed at level 1).
     */
    private void onFrameMembers(Blocks b, PayloadDigester.FrameDigests d, int i, int m) {
        byte[] members = frameRaw();
        int len = b.copyPayload(i, payload, 0);
        codec.decompress(payload, 0, len, members, 0, m * blockSize);
        for (int k = 0; k < m; k++) {
            int idx = frameIdx[k];
            int pfOff = (i + k) * PossessionProof.PF_BYTES;
            if (provenCandidate(idx, d.pfs, pfOff)) {
                continue;
            }
            int n = codec.compress(members, k * blockSize, blockSize, payload, 0);
            if (n > 0) {
                store(idx, payload, 0, n, FormatVersions.CODEC_ZSTD, d.pfs, pfOff);
            } else {
                store(idx, members, k * blockSize, blockSize, FormatVersions.CODEC_RAW, d.pfs, pfOff);
            }
        }
    }

    /** If entry {@code idx}'s verified payload proves the content of its candidate PBN, refers to it and returns true. */
    private boolean provenCandidate(int idx, byte[] pfs, int pfOff) {
        int fpOff = idx * Fingerprint.BYTES;
        long held = candidate[idx];
        if (held != 0 && blocks.fingerprint(held, candidateScratch)
                && Arrays.equals(candidateScratch.fingerprint(), 0, Fingerprint.BYTES, fps, fpOff, fpOff + Fingerprint.BYTES)) {
            // The payload proves the content of a block already stored (and protected since the lookup).
            pbns[idx] = held;
            isNew[idx] = false;
            state[idx] = RESOLVED;
            awaiting--;
            sentBlocks++;
            addProven(held, pfs, pfOff, fpOff);
            return true;
        }
        return false;
    }

    /** Stores entry {@code idx}'s verified payload: as the repair of a bad block, else as a new block. */
    private void store(int idx, byte[] src, int off, int len, int storedCodec, byte[] pfs, int pfOff) {
        int fpOff = idx * Fingerprint.BYTES;
        long target = repairTarget(idx, fpOff);
        // in the store that holds the block: the master's own, or (data on workers) its worker's, whose mark goes after the commit
        if (target != 0 && blocks.repair(target, fps, fpOff, src, off, len, storedCodec, blockSize)) {
            // The verified payload becomes the bad PBN's new copy (at the next sync): every snapshot referencing it heals.
            resolveStored(idx, target, false);
            storedBytes += len;
            repaired++;
            addProven(target, pfs, pfOff, fpOff);
            return;
        }
        state[idx] = STORING;
        window.append(storingWorker[idx], fps, fpOff, src, off, len, storedCodec, blockSize, idx, pfs, pfOff);
        storedBytes += len;
    }

    /** A new block of entry {@code idx} is stored at {@code pbn} (its store landed: {@link StoreWindow}). */
    private void landed(int idx, long pbn, byte[] pfs, int pfOff) {
        resolveStored(idx, pbn, true);
        addProven(pbn, pfs, pfOff, idx * Fingerprint.BYTES);
    }

    /** Entry {@code idx} got its payload stored at {@code pbn}: a new block, or ({@code fresh} false) a repaired one. */
    private void resolveStored(int idx, long pbn, boolean fresh) {
        pbns[idx] = pbn;
        isNew[idx] = fresh;
        state[idx] = RESOLVED;
        awaiting--;
        sentBlocks++;
        newBlocks++;
    }

    /**
     * The bad PBN that entry {@code idx}'s verified payload should repair, or 0: the one the engine
     * offered, else one the bad-block registry knows by this fingerprint (the sampled engine may miss
     * it) if it provably belongs to this session's dedup domain and GC lets us protect it.
     *
     * <p>The domain of a block is recorded in {@code possession} by the session that stored it, at
     * its checkpoint, commit or abandonment; its location is durable from any session's sync. So a
     * block without an entry is either one stored before possession proofs (default domain, and
     * committed) or one a session of any domain has not recorded yet (in flight, or its master
     * crashed). Every snapshot committed since proofs exist recorded its blocks first, so only a
     * block GC counts as referenced is the former; with no count known, it stays unrepaired.
     */
    private long repairTarget(int idx, int fpOff) {
        if (repair[idx] != 0) {
            return repair[idx];
        }
        var bad = services.dataStore().badBlocks();
        long p = bad.isEmpty() ? 0 : bad.holding(fps, fpOff);
        if (p == 0) {
            return 0;
        }
        byte[] theirs = Arrays.copyOfRange(fps, fpOff, fpOff + Fingerprint.BYTES);
        boolean[] recorded = new boolean[1];
        services.dataStore().possession().indexKeys(new long[] {p}, 1, theirs, recorded);
        byte[] ours = new byte[Fingerprint.BYTES];
        domain.keys(fps, fpOff, ours, 0, 1);
        if (!Arrays.equals(theirs, ours)) {
            return 0; // another domain's block: no sharing across domains, even to repair
        }
        if (!recorded[0] && !services.referenceGuard().counted(p)) {
            return 0; // domain unknown (possibly another's): store the block anew, the bad one stays for its owner
        }
        long[] one = {p};
        try {
            if (services.referenceGuard().protectOrRefuse(id, one, 0, 1) > 0) {
                return 0; // a sweep is freeing it
            }
        } catch (BlocksUnavailableException e) {
            return 0; // its worker is not connected (data on workers): no repair now, the block is stored anew
        }
        return p;
    }

    /** Bad blocks this session repaired with its uploads. */
    public long repairedBlocks() {
        return repaired;
    }

    /** Commits the snapshot (see the class comment for the order) and ends the session. */
    Committed onCommit(long volumeBytes) {
        return onCommit(volumeBytes, Consistency.UNKNOWN);
    }

    /** COMMIT: makes the snapshot durable, recording what the agent said of its source's {@code consistency}. */
    Committed onCommit(long volumeBytes, Consistency consistency) {
        window.landAll(); // every block of the snapshot acknowledged by its home before the sync and the catalog batch
        if (awaiting > 0) {
            throw new ProtocolException(ErrorCode.BAD_STATE, "COMMIT before every NEED was answered: " + awaiting + " payloads still missing");
        }
        if (volumeBytes < 0) {
            throw new ProtocolException(ErrorCode.BAD_FRAME, "COMMIT with a negative volume size");
        }
        blocks.sync();
        recordPossession();
        for (int i = 0; i < count; i++) {
            if (state[i] == FOLLOWS) {
                resolveFollower(i);
            }
        }
        recordSegments(false);
        recorded = true;
        for (int i = 0; i < count; i++) {
            done.add(lbns[i], pbns[i]);
        }
        CommittedSnapshot c = services.snapshotCommit().commit(new SnapshotCommit.Request(volume, blockSize, volumeBytes, parentSequence,
                done, volumeBytes, sentBlocks, newBlocks, storedBytes, domain.name(), consistency));
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
            if ((newBlocks > 0 || proven > 0) && !recorded) {
                blocks.sync();
                recordPossession();
                recordStoredSegments();
                services.index().flush();
            }
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "session " + id + " of " + volume + ": could not keep its stored blocks findable: " + e.getMessage());
        } finally {
            end(false);
        }
    }

    private void recordSegments(boolean onlyComplete) {
        recordSegments(stream, segments, onlyComplete);
    }

    private void recordSegments(int upTo, boolean onlyComplete) {
        recordSegments(stream, upTo, onlyComplete);
    }

    /**
     * Teaches the engine the complete segments of an abandoned session. When a part of the index in
     * another process was lost (the likely reason the session ends), once more on a new stream over
     * the parts still there: else the rerun the agent is told to make uploads these blocks again.
     */
    private void recordStoredSegments() {
        try {
            recordSegments(true);
        } catch (RuntimeException e) {
            if (!(e instanceof DedupUnavailableException || e.getCause() instanceof DedupUnavailableException)) {
                throw e;
            }
            try (DedupStream rest = services.index().openStream(volume.name())) {
                recordSegments(rest, segments, true);
            }
        }
    }

    /** Teaches {@code into} segments {@code [0, upTo)}; see {@link #recordSegments(boolean)}. */
    private void recordSegments(DedupStream into, int upTo, boolean onlyComplete) {
        for (int s = 0; s < upTo; s++) {
            int from = segStart[s];
            int len = segLen[s];
            boolean complete = true;
            for (int j = 0; j < len; j++) {
                int idx = from + j;
                long p = state[idx] == FOLLOWS && state[owner[idx]] == RESOLVED ? pbns[owner[idx]] : pbns[idx];
                if (state[idx] == AWAITING || state[idx] == STORING || (state[idx] == FOLLOWS && state[owner[idx]] != RESOLVED)) {
                    complete = false;
                    break;
                }
                segPbns[j] = p;
                segNew[j] = isNew[idx];
            }
            if (!complete) {
                if (onlyComplete) {
                    continue;
                }
                throw new IllegalStateException("segment " + s + " is unresolved at commit");
            }
            domain.keys(fps, from * Fingerprint.BYTES, segFps, 0, len);
            if (!blocks.keepsBlocksOnWorkers()) {
                // blocks on this node: any worker may learn any PBN, so a record that places again (a
                // worker lost since the lookup) still teaches the workers up what the session stored
                into.record(segFps, len, segPbns, segNew);
                continue;
            }
            // where the blocks are (a follower: its owner's worker): a record that has to place again,
            // or runs on another stream, must send no entry to a worker whose range does not hold its PBN
            for (int j = 0; j < len; j++) {
                int idx = from + j;
                segWorkers[j] = storingWorker[state[idx] == FOLLOWS ? owner[idx] : idx];
            }
            into.record(segFps, len, segPbns, segNew, segWorkers);
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
            if (parentCursor != null) {
                parentCursor.close();
            }
            codec.close();
            done.close();
        }
    }

    /** Follower {@code i} takes its owner's PBN, and so its owner's storing worker (the PBN lies in that worker's range). */
    private void resolveFollower(int i) {
        pbns[i] = pbns[owner[i]];
        storingWorker[i] = storingWorker[owner[i]];
        state[i] = RESOLVED;
    }

    /**
     * Moves the longest resolved prefix of whole segments out of the arrays (see the class comment).
     * Does nothing if the first entry still waits for its payload.
     */
    private void checkpoint() {
        window.landAll(); // the prefix dropped below must hold no entry a store in flight still names
        int k = 0;
        while (k < count && (state[k] == RESOLVED || (state[k] == FOLLOWS && state[owner[k]] == RESOLVED))) {
            k++;
        }
        int s = 0;
        while (s < segments && segStart[s] + segLen[s] <= k) {
            s++;
        }
        if (s < segments && segStart[s] < k) {
            k = segStart[s]; // never split a segment: the engine learns whole segments
        }
        // the next attempt after the arrays grew by half the bound again, so a slow agent cannot make each run pay a sync
        nextCheckpoint = Math.max(memoryEntries, count + memoryEntries / 2L);
        if (k == 0) {
            return;
        }
        blocks.sync();
        recordPossession();
        for (int i = 0; i < count; i++) {
            if (state[i] == FOLLOWS && owner[i] < k && state[owner[i]] == RESOLVED) {
                resolveFollower(i);
            }
        }
        recordSegments(s, false);
        for (int i = 0; i < k; i++) {
            done.add(lbns[i], pbns[i]);
        }
        dropPrefix(k, s);
        nextCheckpoint = Math.max(memoryEntries, count + memoryEntries / 2L);
    }

    /** Removes entries {@code [0, k)} and segments {@code [0, s)}, renumbering what stays. */
    private void dropPrefix(int k, int s) {
        FingerprintTable kept = new FingerprintTable(Math.max(1024, count - k));
        int left = count - k;
        // which remaining entries own a request, asked while the old numbering holds
        int[] owners = new int[left];
        int ownerCount = 0;
        for (int i = k; i < count; i++) {
            if (state[i] != FOLLOWS && requested.get(fps, i * Fingerprint.BYTES, fps) == i) {
                owners[ownerCount++] = i - k;
            }
        }
        System.arraycopy(lbns, k, lbns, 0, left);
        System.arraycopy(fps, k * Fingerprint.BYTES, fps, 0, left * Fingerprint.BYTES);
        System.arraycopy(pbns, k, pbns, 0, left);
        System.arraycopy(state, k, state, 0, left);
        System.arraycopy(isNew, k, isNew, 0, left);
        System.arraycopy(owner, k, owner, 0, left);
        System.arraycopy(tags, k, tags, 0, left);
        System.arraycopy(candidate, k, candidate, 0, left);
        System.arraycopy(repair, k, repair, 0, left);
        System.arraycopy(storingWorker, k, storingWorker, 0, left);
        for (int i = 0; i < left; i++) {
            if (state[i] == FOLLOWS) {
                owner[i] -= k; // followers of a dropped owner were resolved above, so this owner stays
            }
        }
        for (int j = 0; j < ownerCount; j++) {
            kept.put(owners[j], fps);
        }
        requested = kept;
        count = left;
        System.arraycopy(segStart, s, segStart, 0, segments - s);
        System.arraycopy(segLen, s, segLen, 0, segments - s);
        segments -= s;
        for (int j = 0; j < segments; j++) {
            segStart[j] -= k;
        }
    }

    public boolean isEnded() {
        return ended;
    }

    private int addEntry(long lbn, byte[] in, int off, byte st, long pbn) {
        if (count == lbns.length) {
            int c = count * 2;
            lbns = Arrays.copyOf(lbns, c);
            fps = Arrays.copyOf(fps, c * Fingerprint.BYTES);
            pbns = Arrays.copyOf(pbns, c);
            state = Arrays.copyOf(state, c);
            isNew = Arrays.copyOf(isNew, c);
            owner = Arrays.copyOf(owner, c);
            tags = Arrays.copyOf(tags, c);
            candidate = Arrays.copyOf(candidate, c);
            repair = Arrays.copyOf(repair, c);
            storingWorker = Arrays.copyOf(storingWorker, c);
        }
        int i = count++;
        lbns[i] = lbn;
        System.arraycopy(in, off, fps, i * Fingerprint.BYTES, Fingerprint.BYTES);
        pbns[i] = pbn;
        state[i] = st;
        isNew[i] = false;
        owner[i] = -1;
        tags[i] = 0;
        candidate[i] = 0;
        repair[i] = 0;
        storingWorker[i] = DedupStream.NO_WORKER;
        return i;
    }

    /** Remembers the pf of {@code pbn} (and the domain key of the fingerprint at {@code fps[fpOff]}) for {@link #recordPossession}. */
    private void addProven(long pbn, byte[] pfs, int pfOff, int fpOff) {
        if (proven == provenPbns.length) {
            int c = proven * 2;
            provenPbns = Arrays.copyOf(provenPbns, c);
            provenPfs = Arrays.copyOf(provenPfs, c * PossessionProof.PF_BYTES);
            provenKeys = Arrays.copyOf(provenKeys, c * Fingerprint.BYTES);
        }
        provenPbns[proven] = pbn;
        System.arraycopy(pfs, pfOff, provenPfs, proven * PossessionProof.PF_BYTES, PossessionProof.PF_BYTES);
        if (!domain.isDefault()) {
            domain.keys(fps, fpOff, provenKeys, proven * Fingerprint.BYTES, 1);
        }
        proven++;
    }

    /**
     * Writes the pfs (and domain keys) of the blocks this session stored or proved, in one synced
     * batch, before the index learns them: GC must find a block's domain key before the index can
     * hand it out, and a later session needs the pf to accept a proof.
     */
    private void recordPossession() {
        services.dataStore().possession().putAll(provenPbns, provenPfs, domain.isDefault() ? null : provenKeys, proven);
        proven = 0;
    }

    private void addSegment(int idx) {
        if (segments == segStart.length) {
            segStart = Arrays.copyOf(segStart, segments * 2);
            segLen = Arrays.copyOf(segLen, segments * 2);
        }
        segStart[segments] = idx;
        segLen[segments] = 1;
        segments++;
    }

    /**
     * The parent's PBN of {@code lbn} (0: zero or unmapped). Targets only grow within a session, so
     * an ordered scan of the parent's map steps from one to the next; a jump of more than
     * {@value #PARENT_SCAN_STEP_LIMIT} LBNs (an incremental skipping unchanged regions) seeks instead.
     */
    private long parentPbn(long lbn) {
        if (!parentScanOpen || lbn < parentScanTarget || lbn - parentScanTarget > PARENT_SCAN_STEP_LIMIT) {
            parentCursor.startScan(parentSequence, lbn, Long.MAX_VALUE);
            parentScanOpen = true;
            parentScanDone = !parentCursor.nextMapped();
            parentScanLbn = parentCursor.lbn();
            parentScanPbn = parentCursor.pbn();
        }
        parentScanTarget = lbn;
        while (!parentScanDone && parentScanLbn < lbn) {
            parentScanDone = !parentCursor.nextMapped();
            parentScanLbn = parentCursor.lbn();
            parentScanPbn = parentCursor.pbn();
        }
        return !parentScanDone && parentScanLbn == lbn ? parentScanPbn : 0;
    }

    private static boolean isZero(byte[] b, int off) {
        for (int k = 0; k < Fingerprint.BYTES; k += 8) {
            if (Fingerprint.getLong(b, off + k) != 0) {
                return false;
            }
        }
        return true;
    }
}
