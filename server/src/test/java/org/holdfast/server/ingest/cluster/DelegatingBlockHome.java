package org.holdfast.server.ingest.cluster;

import java.util.concurrent.CompletableFuture;
import org.holdfast.server.store.BlockBatch;
import org.holdfast.server.store.BlockHome;
import org.holdfast.server.store.ReadAhead;
import org.holdfast.server.store.StoredBlock;

/** A {@link BlockHome} that hands every call to {@link #home()}: tests override the calls they watch or disturb. */
class DelegatingBlockHome implements BlockHome {
    private final BlockHome home;

    DelegatingBlockHome(BlockHome home) {
        this.home = home;
    }

    BlockHome home() {
        return home;
    }

    @Override
    public BlockHome forSession() {
        return home.forSession();
    }

    @Override
    public boolean keepsBlocksOnWorkers() {
        return home.keepsBlocksOnWorkers();
    }

    @Override
    public long append(long worker, byte[] fps, int fpOff, byte[] payload, int off, int storedLength, int codec, int rawLength) {
        return home.append(worker, fps, fpOff, payload, off, storedLength, codec, rawLength);
    }

    @Override
    public long appendFrame(long worker, byte[] fps, int fpOff, int members, byte[] frame, int off, int storedLength, int blockSize) {
        return home.appendFrame(worker, fps, fpOff, members, frame, off, storedLength, blockSize);
    }

    @Override
    public int storesInFlight() {
        return home.storesInFlight();
    }

    @Override
    public CompletableFuture<Long> startAppend(long worker, byte[] fps, int fpOff, byte[] payload, int off, int storedLength, int codec,
                                               int rawLength) {
        return home.startAppend(worker, fps, fpOff, payload, off, storedLength, codec, rawLength);
    }

    @Override
    public CompletableFuture<Long> startAppendFrame(long worker, byte[] fps, int fpOff, int members, byte[] frame, int off, int storedLength,
                                                    int blockSize) {
        return home.startAppendFrame(worker, fps, fpOff, members, frame, off, storedLength, blockSize);
    }

    @Override
    public void sync() {
        home.sync();
    }

    @Override
    public boolean repair(long pbn, byte[] fps, int fpOff, byte[] payload, int off, int storedLength, int codec, int rawLength) {
        return home.repair(pbn, fps, fpOff, payload, off, storedLength, codec, rawLength);
    }

    @Override
    public void committed() {
        home.committed();
    }

    @Override
    public void fingerprints(long[] pbns, int n, byte[] out, boolean[] found, boolean[] scratch) {
        home.fingerprints(pbns, n, out, found, scratch);
    }

    @Override
    public boolean fingerprint(long pbn, StoredBlock scratch) {
        return home.fingerprint(pbn, scratch);
    }

    @Override
    public int readBatch(long[] pbns, int from, int n, BlockBatch into) {
        return home.readBatch(pbns, from, n, into);
    }

    @Override
    public String where() {
        return home.where();
    }

    @Override
    public ReadAhead readAhead() {
        return home.readAhead();
    }
}
