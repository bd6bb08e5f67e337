package org.holdfast.common.id;

/**
 * A snapshot of one volume: the volume and its sequence number there (1, 2, 3, ... in commit
 * order). The sequence is what the versioned logical-to-physical map is keyed by.
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
}
