package org.holdfast.server.ingest.cluster;

import java.nio.file.Path;
import java.util.List;
import java.util.OptionalLong;
import org.holdfast.server.store.object.ObjectStore;
import org.holdfast.server.store.object.ObjectStoreStats;

/** A real object store behind a test's wrapper: every call goes to it unless the wrapper overrides it. */
abstract class ForwardingObjectStore implements ObjectStore {
    protected final ObjectStore real;

    ForwardingObjectStore(ObjectStore real) {
        this.real = real;
    }

    @Override
    public boolean putIfAbsent(String key, Path file) {
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
