package org.holdfast.server.store;

import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * The records of a takeover's (or a read-only copy's) adopted logs that failed their check, and the
 * rule that settles them once every log is indexed: a PBN that another log holds a good record of is
 * not damaged (the worker repaired it in a later log; the rotten frame stays as dead bytes, and a PBN
 * is never reused, so each good record of it holds its bytes); the rest are.
 */
final class AdoptedDamage implements LogBlocks.Damaged {
    private static final int NAMED = 10;

    private final Map<Long, String> problems = new TreeMap<>();
    private final Map<Long, String> keys = new TreeMap<>();
    private String key;

    /** The object key of the log walked from now on (named in a refusal). */
    void log(String objectKey) {
        key = objectKey;
    }

    @Override
    public void damaged(long pbn, String problem) {
        problems.putIfAbsent(pbn, problem);
        keys.putIfAbsent(pbn, key);
    }

    /** Forgets every PBN {@code locations} holds a good record of; true if none is left. */
    boolean settle(LocationIndex locations) {
        StoredBlock at = new StoredBlock(1);
        problems.keySet().removeIf(pbn -> locations.get(pbn, at));
        keys.keySet().retainAll(problems.keySet());
        return problems.isEmpty();
    }

    /** Hands every PBN left to {@code to}. */
    void reportTo(LogBlocks.Damaged to) {
        problems.forEach(to::damaged);
    }

    /** The refusal of a takeover that would lose the PBNs left (call after {@link #settle}, when it returned false). */
    CorruptDataException refusal(long worker, long epoch) {
        Map.Entry<Long, String> first = problems.entrySet().iterator().next();
        String named = problems.keySet().stream().limit(NAMED).map(String::valueOf).collect(Collectors.joining(", "))
                + (problems.size() > NAMED ? " and " + (problems.size() - NAMED) + " more" : "");
        return new CorruptDataException("range-takeover", keys.get(first.getKey()), "pbn " + first.getKey(), problems.size()
                + " blocks of worker " + worker + "'s adopted logs fail their check and no adopted log holds a good record of them"
                + " (PBNs " + named + "; the first: " + first.getValue() + "): taking the range over would lose them, "
                + refused(epoch));
    }

    /**
     * The refusal of a takeover whose adopted log {@code objectKey} ({@code size} bytes) holds no whole,
     * checksummed record at {@code offset}: a sealed log has no torn tail, so the blocks past it are
     * there but unreadable, and their PBNs (in the damaged header) are unknown, so no other log can be
     * shown to hold them.
     */
    static CorruptDataException unreadTail(String objectKey, long offset, long size, long epoch) {
        return new CorruptDataException("range-takeover", objectKey, "offset " + offset, unreadTail(offset, size)
                + ": taking the range over would lose the blocks stored there, " + refused(epoch));
    }

    /** What the walk of a sealed log that stopped at {@code offset} of its {@code size} bytes left unread. */
    static String unreadTail(long offset, long size) {
        return "the sealed log has no whole, checksummed record at offset " + offset + " (a damaged record header, or a record"
                + " running past the end) and its " + (size - offset) + " bytes from there to the end (of " + size + ") were not read";
    }

    private static String refused(long epoch) {
        return "so nothing was taken over (the marker of epoch " + epoch + " stays; a restart of this node tries again)."
                + " Put a good copy of that log object back in the bucket (from bucket versioning or a replica), or start"
                + " the worker's old node again if its disk survives; then restart this node";
    }
}
