package org.holdfast.gc.gma;

import java.util.concurrent.locks.ReentrantLock;
import org.holdfast.gc.gma.GmaChunk.UpdateKinds;

/** Test helpers: one RC update written to the GMA, and one slot's RC read back, each under the chunk's lock. */
final class GmaSlots {
    private GmaSlots() {
    }

    static void addRc(GcMetadataArray gma, long lsn, long pbn, long delta) {
        long c = GmaFormat.chunkOf(pbn);
        ReentrantLock l = gma.lock(c);
        l.lock();
        try {
            GmaChunk chunk = gma.load(c);
            chunk.apply(lsn, UpdateKinds.RC_ADD, pbn, delta);
            gma.write(chunk);
        } finally {
            l.unlock();
        }
    }

    static long rc(GcMetadataArray gma, long pbn) {
        long c = GmaFormat.chunkOf(pbn);
        ReentrantLock l = gma.lock(c);
        l.lock();
        try {
            return gma.load(c).rc(GmaFormat.slotOf(pbn));
        } finally {
            l.unlock();
        }
    }
}
