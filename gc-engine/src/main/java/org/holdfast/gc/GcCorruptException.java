package org.holdfast.gc;

import java.nio.file.Path;

/** A GC file failed its checksum or format check beyond what recovery repairs: run fsck. */
public class GcCorruptException extends GcStoreException {
    public GcCorruptException(String store, Path path, String key, String message) {
        super(store, path, key, message + " (run fsck)");
    }
}
