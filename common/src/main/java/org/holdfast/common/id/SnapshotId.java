package org.holdfast.common.id;

/**
 * A snapshot of one volume: the volume and its sequence number there (1, 2, 3, ... in commit
 * order). The sequence is what the versioned logical-to-physical map is keyed by. Its one text
 * form is {@code volume@sequence} (e.g. {@code db01@3}): REST returns it, the agent prints it, and
 * both accept it, or the bare sequence where the volume is known ({@link #parse(String, VolumeId)}).
 */
public record SnapshotId(VolumeId volume, long sequence) {
    public SnapshotId {
        if (volume == null) {
            throw new IllegalArgumentException("snapshot needs a volume");
        }
        if (sequence < 1) {
            throw new IllegalArgumentException("snapshot sequence starts at 1, got " + sequence);
        }
    }

    @Override
    public String toString() {
        return volume + "@" + sequence;
    }

    /**
     * Reads a snapshot id of {@code volume}: {@code volume@sequence} or the bare sequence.
     *
     * @throws IllegalArgumentException if it is neither, the sequence is not a number from 1 up, or
     *     the id names another volume
     */
    public static SnapshotId parse(String text, VolumeId volume) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("empty snapshot id: give 'volume@sequence' or the sequence number");
        }
        String t = text.trim();
        int at = t.lastIndexOf('@');
        if (at >= 0) {
            String named = t.substring(0, at);
            if (!named.equals(volume.name())) {
                throw new IllegalArgumentException("snapshot id '" + text + "' names volume '" + named + "', not '" + volume + "'");
            }
            t = t.substring(at + 1);
        }
        long seq;
        try {
            seq = Long.parseLong(t);
        } catch (NumberFormatException e) {
            seq = 0;
        }
        if (seq < 1 || !t.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new IllegalArgumentException("invalid snapshot id '" + text + "': give 'volume@sequence' (like " + volume
                    + "@3) or the sequence number (3)");
        }
        return new SnapshotId(volume, seq);
    }
}
