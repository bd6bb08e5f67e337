package org.holdfast.common.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.util.ReferenceCounted;

/**
 * A message of {@code count} blocks whose payloads lie in one pooled buffer {@code data}, block
 * {@code i}'s at absolute index {@code offsets[i]} for {@code lengths[i]} bytes ({@link Blocks},
 * {@link RestoreData}). The message is reference counted through that buffer, so retaining or
 * releasing it retains or releases {@code data}.
 *
 * @param <M> the message type itself, so that {@code retain} and {@code touch} return it
 */
public interface PooledPayloads<M extends PooledPayloads<M>> extends ReferenceCounted {

    /** Number of blocks. */
    int count();

    /** Absolute index in {@link #data()} of each block's payload. */
    int[] offsets();

    /** Payload length of each block. */
    int[] lengths();

    /** The buffer holding all payloads. */
    ByteBuf data();

    /** Sum of payload lengths. */
    default long payloadBytes() {
        long n = 0;
        int[] lengths = lengths();
        for (int i = 0; i < count(); i++) {
            n += lengths[i];
        }
        return n;
    }

    /** Copies block {@code i}'s payload into {@code dst} at {@code dstOff}; returns its length (0 for a block without payload). */
    default int copyPayload(int i, byte[] dst, int dstOff) {
        int length = lengths()[i];
        data().getBytes(offsets()[i], dst, dstOff, length);
        return length;
    }

    @Override
    default int refCnt() {
        return data().refCnt();
    }

    /** As {@code retain(1)}. */
    @Override
    default M retain() {
        return retain(1);
    }

    @Override
    default M retain(int increment) {
        data().retain(increment);
        return self();
    }

    @Override
    default M touch(Object hint) {
        data().touch(hint);
        return self();
    }

    /** As {@code touch(null)}. */
    @Override
    default M touch() {
        return touch(null);
    }

    @Override
    default boolean release() {
        return data().release();
    }

    @Override
    default boolean release(int decrement) {
        return data().release(decrement);
    }

    // Each implementation names itself as M (Blocks implements PooledPayloads<Blocks>), so the cast holds.
    @SuppressWarnings("unchecked")
    private M self() {
        return (M) this;
    }
}
