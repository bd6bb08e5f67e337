package org.holdfast.common.protocol;

import java.util.Arrays;
import org.holdfast.common.id.Fingerprint;

/**
 * ENTRIES (0x12), agent to server: a run of {@code count} consecutive LBNs from {@code startLbn}
 * with their fingerprints packed into one array, entry {@code i} at {@code i * 32}, and one
 * possession tag per entry ({@link org.holdfast.common.hash.PossessionProof}; 0 for a zero block,
 * where the receiver ignores it). An all-zero fingerprint marks a zero block.
 *
 * <p>The arrays are owned by the message and not copied; the sender must not modify them after
 * constructing the message (equality compares contents).
 */
public record Entries(long startLbn, int count, byte[] fingerprints, long[] tags) implements Message {
    /** Wire bytes of one entry: its fingerprint and its u64 possession tag. */
    public static final int ENTRY_BYTES = Fingerprint.BYTES + 8;

    public Entries {
        if (startLbn < 0) {
            throw new IllegalArgumentException("startLbn must not be negative: " + startLbn);
        }
        if (count < 1 || count > ProtocolLimits.MAX_RUN_ENTRIES) {
            throw new IllegalArgumentException("run of " + count + " entries, must be 1.." + ProtocolLimits.MAX_RUN_ENTRIES);
        }
        if (fingerprints == null || fingerprints.length != count * Fingerprint.BYTES) {
            throw new IllegalArgumentException("fingerprints must be exactly " + count * Fingerprint.BYTES + " bytes");
        }
        if (tags == null || tags.length != count) {
            throw new IllegalArgumentException("tags must hold exactly " + count + " entries");
        }
    }

    /** Offset of entry {@code i}'s fingerprint in {@link #fingerprints()}. */
    public static int offset(int i) {
        return i * Fingerprint.BYTES;
    }

    /** The LBN of entry {@code i}. */
    public long lbn(int i) {
        return startLbn + i;
    }

    /** True if entry {@code i} is a zero block (all-zero fingerprint). */
    public boolean isZero(int i) {
        int off = offset(i);
        for (int k = 0; k < Fingerprint.BYTES; k++) {
            if (fingerprints[off + k] != 0) {
                return false;
            }
        }
        return true;
    }

    /** Entry {@code i}'s fingerprint as an object (allocates; for edges and tests). */
    public Fingerprint fingerprint(int i) {
        return Fingerprint.read(fingerprints, offset(i));
    }

    @Override
    public MessageType type() {
        return MessageType.ENTRIES;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Entries e && e.startLbn == startLbn && e.count == count
                && Arrays.equals(e.fingerprints, fingerprints) && Arrays.equals(e.tags, tags);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(startLbn) * 31 + Arrays.hashCode(fingerprints);
    }

    @Override
    public String toString() {
        return "Entries[startLbn=" + startLbn + ", count=" + count + "]";
    }
}
