package org.holdfast.server.ingest.cluster;

import java.nio.file.Path;
import org.holdfast.server.store.object.ObjectStore;

/**
 * A real object store whose takeover is slow between its listing and its marker: before the first
 * create-only write of a key ending in {@code suffix} it runs {@code meanwhile} (what another node
 * does in that window), then writes. Every call goes to the real store.
 */
final class PausedMarkerStore extends ForwardingObjectStore {
    private final String suffix;
    private Runnable meanwhile;

    PausedMarkerStore(ObjectStore real, String suffix, Runnable meanwhile) {
        super(real);
        this.suffix = suffix;
        this.meanwhile = meanwhile;
    }

    @Override
    public boolean putIfAbsent(String key, Path file) {
        if (meanwhile != null && key.endsWith(suffix)) {
            Runnable r = meanwhile;
            meanwhile = null;
            r.run();
        }
        return real.putIfAbsent(key, file);
    }
}
