package org.holdfast.server.ingest.cluster;

import java.nio.file.Path;
import java.util.List;
import java.util.OptionalLong;
import org.holdfast.server.store.object.ObjectStore;
import org.holdfast.server.store.object.ObjectStoreStats;

/**
 * A real object store whose takeover is slow between its listing and its marker: before the first
 * create-only write of a key ending in {@code suffix} it runs {@code meanwhile} (what another node
 * does in that window), then writes. Every call goes to the real store.
 */
final class PausedMarkerStore implements ObjectStore {
    private final ObjectStore real;
    private final String suffix;
    private Runnable meanwhile;

    PausedMarkerStore(ObjectStore real, String suffix, Runnable meanwhile) {
        this.real = real;
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

    @Override
    public byte[] getRange(String key, long offset, int length) {
        return real.getRange(key, offset, length);
    }

    @Override
    public void download(String key, Path target) {
        real.download(key, target);
    }

    @Override
    public void delete(String key) {
        real.delete(key);
    }

    @Override
    public OptionalLong size(String key) {
        return real.size(key);
    }

    @Override
    public List<String> list(String prefix) {
        return real.list(prefix);
    }

    @Override
    public ObjectStoreStats stats() {
        return real.stats();
    }

    @Override
    public void close() {
        real.close();
    }
}
