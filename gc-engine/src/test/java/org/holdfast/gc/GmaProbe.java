package org.holdfast.gc;

import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantLock;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.gc.gma.GmaChunk;
import org.holdfast.gc.gma.GmaFormat;

/** Reads GMA slots in tests (after {@link BoscPipeline#commitAll()}). */
public final class GmaProbe {
    private GmaProbe() {
    }

    /** rc, pins, flags, expiry of one PBN. */
    public static long[] slot(BoscPipeline p, long pbn) {
        long c = p.layout().chunkOf(pbn);
        ReentrantLock l = p.gma().lock(c);
        l.lock();
        try {
            GmaChunk chunk = p.gma().load(c);
            int s = p.layout().slotOf(pbn);
            return new long[] {chunk.rc(s), chunk.pins(s), chunk.flags(s), chunk.expiry(s)};
        } finally {
            l.unlock();
        }
    }

    public static long rc(BoscPipeline p, long pbn) {
        return slot(p, pbn)[0];
    }

    public static long expiry(BoscPipeline p, long pbn) {
        return slot(p, pbn)[3];
    }

    public static boolean freed(BoscPipeline p, long pbn) {
        return (slot(p, pbn)[2] & GmaFormat.FLAG_FREED) != 0;
    }

    /** Every USED slot as "rc/pins/flags/expiry", keyed by PBN. */
    public static TreeMap<Long, String> dump(BoscPipeline p) {
        p.commitAll();
        TreeMap<Long, String> out = new TreeMap<>();
        p.gma().scan(p.chunkLimit(), (pbn, rc, pins, flags, expiry) -> out.put(pbn, rc + "/" + pins + "/" + flags + "/" + expiry));
        return out;
    }
}
