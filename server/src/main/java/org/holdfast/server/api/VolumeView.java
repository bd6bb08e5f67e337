package org.holdfast.server.api;

import java.time.Instant;
import org.holdfast.server.catalog.VolumeRecord;

/** A volume in a list: name, block size, creation time (epoch ms and ISO-8601), latest snapshot (0: none yet) and its size. */
public record VolumeView(String name, int blockSize, long createdAtMillis, long latestSequence, long volumeBytes, String createdAt) {
    static VolumeView of(VolumeRecord v) {
        return new VolumeView(v.name().name(), v.blockSize(), v.createdAtMillis(), v.latestSequence(), v.volumeBytes(),
                Instant.ofEpochMilli(v.createdAtMillis()).toString());
    }
}
