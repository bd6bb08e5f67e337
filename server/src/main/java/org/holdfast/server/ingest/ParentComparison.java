package org.holdfast.server.ingest;

import java.util.Arrays;
import org.holdfast.common.id.Fingerprint;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.server.catalog.MapCursor;
import org.holdfast.server.store.BlockHome;

/**
 * The comparison of each ENTRIES run with the map of the volume's parent snapshot: for every LBN of
 * the run, whether the agent sent a zero block, the parent's PBN and that PBN's fingerprint. Owns
 * the map cursor. Session lane only; the arrays are reused for every run.
 */
final class ParentComparison implements AutoCloseable {
    private static final int SCAN_STEP_LIMIT = 64;

    private final MapCursor cursor;
    private final long parentSequence;
    private final BlockHome blocks;
    // the current run (MAX_RUN_ENTRIES each)
    private final boolean[] zeroes = new boolean[ProtocolLimits.MAX_RUN_ENTRIES];
    private final long[] parentPbns = new long[ProtocolLimits.MAX_RUN_ENTRIES];
    private final long[] lookupPbns = new long[ProtocolLimits.MAX_RUN_ENTRIES];
    private final byte[] parentFps = new byte[ProtocolLimits.MAX_RUN_ENTRIES * Fingerprint.BYTES];
    private final boolean[] parentFound = new boolean[ProtocolLimits.MAX_RUN_ENTRIES];
    private final boolean[] lookupScratch = new boolean[ProtocolLimits.MAX_RUN_ENTRIES];
    // ordered scan of the parent's map: stands on scanLbn (its PBN scanPbn), or is done
    private boolean scanOpen;
    private boolean scanDone;
    private long scanLbn;
    private long scanPbn;
    private long scanTarget = -1;

    /** Compares with snapshot {@code parentSequence} read through {@code cursor} (closed with this), fingerprints from {@code blocks}. */
    ParentComparison(MapCursor cursor, long parentSequence, BlockHome blocks) {
        this.cursor = cursor;
        this.parentSequence = parentSequence;
        this.blocks = blocks;
    }

    /** Compares the run of {@code n} fingerprints {@code in} from {@code start}: one ordered map scan, then the fingerprints in one batch. */
    void compare(long start, int n, byte[] in) {
        for (int i = 0; i < n; i++) {
            zeroes[i] = isZero(in, i * Fingerprint.BYTES);
            parentPbns[i] = scanTo(start + i);
            lookupPbns[i] = zeroes[i] ? 0 : parentPbns[i];
        }
        blocks.fingerprints(lookupPbns, n, parentFps, parentFound, lookupScratch);
    }

    /** Whether entry {@code i} of the run is a zero block. */
    boolean zero(int i) {
        return zeroes[i];
    }

    /** The parent's PBN of entry {@code i} of the run (0: zero or unmapped). */
    long pbn(int i) {
        return parentPbns[i];
    }

    /** Whether entry {@code i} of the run, fingerprint {@code in[off..+32)}, has the fingerprint of its parent's PBN. */
    boolean sameAsParent(int i, byte[] in, int off) {
        return parentFound[i] && Arrays.equals(parentFps, off, off + Fingerprint.BYTES, in, off, off + Fingerprint.BYTES);
    }

    @Override
    public void close() {
        cursor.close();
    }

    /** Whether the fingerprint at {@code b[off..+32)} is all zero (the agent's mark of a zero block). */
    static boolean isZero(byte[] b, int off) {
        for (int k = 0; k < Fingerprint.BYTES; k += 8) {
            if (Fingerprint.getLong(b, off + k) != 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * The parent's PBN of {@code lbn} (0: zero or unmapped). Targets only grow within a session, so
     * an ordered scan of the parent's map steps from one to the next; a jump of more than
     * {@value #SCAN_STEP_LIMIT} LBNs (an incremental skipping unchanged regions) seeks instead.
     */
    private long scanTo(long lbn) {
        if (!scanOpen || lbn < scanTarget || lbn - scanTarget > SCAN_STEP_LIMIT) {
            cursor.startScan(parentSequence, lbn, Long.MAX_VALUE);
            scanOpen = true;
            scanDone = !cursor.nextMapped();
            scanLbn = cursor.lbn();
            scanPbn = cursor.pbn();
        }
        scanTarget = lbn;
        while (!scanDone && scanLbn < lbn) {
            scanDone = !cursor.nextMapped();
            scanLbn = cursor.lbn();
            scanPbn = cursor.pbn();
        }
        return !scanDone && scanLbn == lbn ? scanPbn : 0;
    }
}
