package org.holdfast.server.api;

import org.holdfast.server.catalog.VolumeRecord;

/** A volume in the API: name, block size, creation time, latest snapshot and its size. */
public record VolumeView(String name, int blockSize, long createdAtMillis, long latestSequence, long volumeBytes) {
    static VolumeView of(VolumeRecord v) {
        return new VolumeView(v.name().name(), v.blockSize(), v.createdAtMillis(), v.latestSequence(), v.volumeBytes());
    }
}
