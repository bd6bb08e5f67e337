package org.holdfast.gc.check;

import java.util.List;

/**
 * What fsck found. Each finding has a count and up to {@link Fsck#SAMPLE_LIMIT} sample PBNs.
 * <ul>
 * <li>referencedButFreed: a retained snapshot maps a PBN the GMA marks FREED. Data loss.</li>
 * <li>missingBlocks / corruptBlocks: a referenced PBN is not in the data store / fails its checksum.
 *     Data loss.</li>
 * <li>leakedPastExpiry: RC = 0, ET passed, no pin, not freed, no retained snapshot references it.
 *     Space a sweep should reclaim; after a sweep at the same time there must be none.</li>
 * <li>rcMismatches: the GMA's RC differs from the mappings in the volumes' newest states.</li>
 * <li>etMismatches: RC = 0 and ET below the expiry of a retained, unheld snapshot that maps it
 *     (the sweep could free it early); or a held snapshot's PBN without a pin.</li>
 * <li>untracked: stored, unreferenced, and unknown to the GMA, so no sweep would ever free it
 *     (a backup killed before its protection was logged; the server re-protects them at start).</li>
 * </ul>
 */
public record FsckReport(long snapshotsChecked, long referencedPbns, long gmaSlots,
        Finding referencedButFreed, Finding missingBlocks, Finding corruptBlocks, Finding leakedPastExpiry,
        Finding rcMismatches, Finding etMismatches, Finding untracked) {

    /** Count and samples of one finding. */
    public record Finding(long count, List<Long> samples) {
    }

    /** True if a retained snapshot may not restore. */
    public boolean dataLoss() {
        return referencedButFreed.count() > 0 || missingBlocks.count() > 0 || corruptBlocks.count() > 0;
    }

    /** True if the GMA disagrees with the catalog (counts or expiries). */
    public boolean bookkeepingErrors() {
        return rcMismatches.count() > 0 || etMismatches.count() > 0;
    }

    /** Nothing wrong at all, leaks included. */
    public boolean clean() {
        return !dataLoss() && !bookkeepingErrors() && leakedPastExpiry.count() == 0 && untracked.count() == 0;
    }

    /** The report as an operator reads it. */
    public String toText() {
        StringBuilder sb = new StringBuilder();
        sb.append("fsck: ").append(snapshotsChecked).append(" snapshots, ").append(referencedPbns)
                .append(" referenced blocks, ").append(gmaSlots).append(" GMA entries\n");
        line(sb, "referenced but freed (DATA LOSS)", referencedButFreed);
        line(sb, "missing blocks (DATA LOSS)", missingBlocks);
        line(sb, "corrupt blocks (DATA LOSS)", corruptBlocks);
        line(sb, "RC disagreements", rcMismatches);
        line(sb, "ET disagreements", etMismatches);
        line(sb, "leaked past expiry (reclaimable)", leakedPastExpiry);
        line(sb, "untracked stored blocks (leak)", untracked);
        sb.append(clean() ? "result: clean\n" : dataLoss() ? "result: DATA LOSS\n" : "result: errors\n");
        return sb.toString();
    }

    private static void line(StringBuilder sb, String name, Finding f) {
        sb.append("  ").append(name).append(": ").append(f.count());
        if (!f.samples().isEmpty()) {
            sb.append(" e.g. PBN ").append(f.samples());
        }
        sb.append('\n');
    }
}
