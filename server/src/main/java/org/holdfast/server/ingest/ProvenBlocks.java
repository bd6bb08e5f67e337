package org.holdfast.server.ingest;

import java.util.Arrays;
import org.holdfast.common.hash.PossessionProof;
import org.holdfast.common.id.Fingerprint;
import org.holdfast.server.engine.DedupDomain;
import org.holdfast.server.store.PossessionIndex;

/**
 * The possession fingerprints (and, outside the default dedup domain, the index keys) of the blocks
 * a session stored or proved since it last recorded them. They are written to the possession index
 * in one synced batch before the fingerprint index learns the blocks: GC must find a block's domain
 * key before the index can hand it out, and a later session needs the pf to accept a proof.
 * Session lane only.
 */
final class ProvenBlocks {
    private final PossessionIndex possession;
    private final DedupDomain domain;
    private int count;
    private long[] pbns = new long[256];
    private byte[] pfs = new byte[256 * PossessionProof.PF_BYTES];
    private byte[] keys = new byte[256 * Fingerprint.BYTES];

    /** Blocks of {@code domain}, recorded in {@code possession}. */
    ProvenBlocks(PossessionIndex possession, DedupDomain domain) {
        this.possession = possession;
        this.domain = domain;
    }

    /** Remembers that {@code pbn} has pf {@code pf[pfOff..+16)} and the fingerprint at {@code fps[fpOff..+32)}. */
    void add(long pbn, byte[] pf, int pfOff, byte[] fps, int fpOff) {
        if (count == pbns.length) {
            int c = count * 2;
            pbns = Arrays.copyOf(pbns, c);
            pfs = Arrays.copyOf(pfs, c * PossessionProof.PF_BYTES);
            keys = Arrays.copyOf(keys, c * Fingerprint.BYTES);
        }
        pbns[count] = pbn;
        System.arraycopy(pf, pfOff, pfs, count * PossessionProof.PF_BYTES, PossessionProof.PF_BYTES);
        if (!domain.isDefault()) {
            domain.keys(fps, fpOff, keys, count * Fingerprint.BYTES, 1);
        }
        count++;
    }

    /** Blocks added since the last {@link #record}. */
    int size() {
        return count;
    }

    /** Writes what was added in one synced batch (nothing if empty) and starts over. */
    void record() {
        possession.putAll(pbns, pfs, domain.isDefault() ? null : keys, count);
        count = 0;
    }
}
