package org.holdfast.server.api;

import org.holdfast.common.id.VolumeId;
import org.holdfast.server.catalog.UnknownVolumeException;

/** Ids taken from request paths, checked once for every controller. */
final class PathIds {
    private PathIds() {
    }

    /** The volume a path names; a name that cannot be valid names no volume: 404 like any unknown one. */
    static VolumeId volumeId(String name) {
        if (!VolumeId.isValid(name)) {
            throw new UnknownVolumeException(name);
        }
        return new VolumeId(name);
    }
}
