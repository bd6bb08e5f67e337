package org.holdfast.common.protocol;

/**
 * Room for frames in flight that a {@link FrameDecoder} must get before it buffers a frame's body.
 *
 * <p>The decoder asks for the whole frame ({@code 4 + length} bytes) as soon as its 6-byte header
 * has arrived and, if refused, reads nothing more until {@link FrameDecoder#retry} is called: a
 * frame that has begun always has room to complete, so partial frames can never deadlock each
 * other. Nothing of the claimed size is allocated before the reservation succeeds; then the decoder
 * grows its buffer once to exactly the frame's size, so it holds no more than it reserved. Once a frame
 * is emitted its reservation belongs to whoever consumes the message (it calls {@link #release});
 * the decoder releases the reservation of a frame it never emits (violation, channel closed).
 */
public interface FrameBudget {
    /** Never refuses: the client side, and tests of the decoder alone. */
    FrameBudget UNLIMITED = new FrameBudget() {
        @Override
        public boolean tryReserve(int frameBytes) {
            return true;
        }

        @Override
        public void release(int frameBytes) {
        }
    };

    /** Reserves {@code frameBytes}; false if there is no room now (the decoder waits for {@link FrameDecoder#retry}). */
    boolean tryReserve(int frameBytes);

    /** Gives back a reservation. Any thread. */
    void release(int frameBytes);
}
