package org.holdfast.client.scan;

import java.lang.reflect.Field;
import java.nio.ByteBuffer;

/**
 * Unmaps a mapped file region at once, instead of whenever the collector finds its buffer: the
 * reader maps every chunk of a volume, and a terabyte of mappings waiting for a collection would
 * hold gigabytes of page tables. Through {@code sun.misc.Unsafe.invokeCleaner} (module
 * jdk.unsupported, open to every module); where that is not possible, {@link #AVAILABLE} is false
 * and the reader reads instead of mapping.
 */
final class Unmapper {
    /** True if {@link #unmap} works on this JVM. */
    static final boolean AVAILABLE;
    private static final sun.misc.Unsafe UNSAFE;

    static {
        sun.misc.Unsafe unsafe = null;
        try {
            Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            unsafe = (sun.misc.Unsafe) f.get(null);
        } catch (ReflectiveOperationException | RuntimeException e) {
            unsafe = null;
        }
        UNSAFE = unsafe;
        AVAILABLE = unsafe != null;
    }

    private Unmapper() {
    }

    /** Unmaps {@code mapped} (from {@code FileChannel.map}, no views of it in use); it must not be touched again. */
    static void unmap(ByteBuffer mapped) {
        UNSAFE.invokeCleaner(mapped);
    }
}
