package org.holdfast.server.ingest;

import java.util.Arrays;
import org.holdfast.common.id.Fingerprint;
import org.holdfast.server.engine.DedupDomain;
import org.holdfast.server.store.BlocksUnavailableException;

/**
 * Which bad PBN a session's verified upload should repair, if any: the one the engine offered at
 * lookup, else one the bad-block registry knows by the fingerprint (the sampled engine may miss it)
 * if it provably belongs to the session's dedup domain and GC lets the session protect it.
 *
 * <p>The domain of a block is recorded in {@code possession} by the session that stored it, at
 * its checkpoint, commit or abandonment; its location is durable from any session's sync. So a
 * block without an entry is either one stored before possession proofs (default domain, and
 * committed) or one a session of any domain has not recorded yet (in flight, or its master
 * crashed). Every snapshot committed since proofs exist recorded its blocks first, so only a
 * block GC counts as referenced is the former; with no count known, it stays unrepaired.
 */
final class RepairTarget {
    private final long session;
    private final SessionEntries entries;
    private final DedupDomain domain;
    private final IngestServices services;

    /** Repairs for session {@code session}'s {@code entries} of {@code domain}. */
    RepairTarget(long session, SessionEntries entries, DedupDomain domain, IngestServices services) {
        this.session = session;
        this.entries = entries;
        this.domain = domain;
        this.services = services;
    }

    /** The bad PBN entry {@code idx} (fingerprint at {@code fps[fpOff]}) repairs, protected for the session; 0: none, store it anew. */
    long of(int idx, int fpOff) {
        if (entries.repair[idx] != 0) {
            return entries.repair[idx];
        }
        var bad = services.dataStore().badBlocks();
        byte[] fps = entries.fps;
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
            if (services.referenceGuard().protectOrRefuse(session, one, 0, 1) > 0) {
                return 0; // a sweep is freeing it
            }
        } catch (BlocksUnavailableException e) {
            return 0; // its worker is not connected (data on workers): no repair now, the block is stored anew
        }
        return p;
    }
}
