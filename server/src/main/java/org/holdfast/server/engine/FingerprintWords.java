package org.holdfast.server.engine;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/** Reads the four big-endian 64-bit words of a fingerprint in a packed 32-byte-per-entry array, without copying. */
public final class FingerprintWords {
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);

    private FingerprintWords() {
    }

    /** Word {@code w} (0..3) of entry {@code i} of {@code fps}. */
    public static long word(byte[] fps, int i, int w) {
        return (long) LONGS.get(fps, i * 32 + w * 8);
    }

    /** Writes {@code v} as word {@code w} of entry {@code i}. */
    public static void put(byte[] fps, int i, int w, long v) {
        LONGS.set(fps, i * 32 + w * 8, v);
    }
}
