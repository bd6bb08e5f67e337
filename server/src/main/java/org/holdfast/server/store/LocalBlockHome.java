package org.holdfast.server.store;

/** The blocks live in the master's (or a standalone server's) own {@link DataStore}: today's behaviour, the storing worker ignored. */
public final class LocalBlockHome implements BlockHome {
    private final DataStore store;

    public LocalBlockHome(DataStore store) {
        this.store = store;
    }

    @Override
    public long append(long worker, byte[] fps, int fpOff, byte[] payload, int off, int storedLength, int codec, int rawLength) {
        return store.append(fps, fpOff, payload, off, storedLength, codec, rawLength);
    }

    @Override
    public long appendFrame(long worker, byte[] fps, int fpOff, int members, byte[] frame, int off, int storedLength, int blockSize) {
        return store.appendFrame(fps, fpOff, members, frame, off, storedLength, blockSize);
    }

    @Override
    public void sync() {
        store.sync();
    }

    @Override
    public boolean repair(long pbn, byte[] fps, int fpOff, byte[] payload, int off, int storedLength, int codec, int rawLength) {
        return store.repair(pbn, fps, fpOff, payload, off, storedLength, codec, rawLength);
    }

    @Override
    public void fingerprints(long[] pbns, int n, byte[] out, boolean[] found, boolean[] scratch) {
        store.fingerprints(pbns, n, out, found, scratch);
    }

    @Override
    public boolean fingerprint(long pbn, StoredBlock scratch) {
        return store.fingerprint(pbn, scratch);
    }

    @Override
    public int readBatch(long[] pbns, int from, int n, BlockBatch into) {
        return store.readBatch(pbns, from, n, into);
    }

    @Override
    public String where() {
        return store.dir().toString();
    }

    @Override
    public ReadAhead readAhead() {
        return store.readAhead();
    }
}
