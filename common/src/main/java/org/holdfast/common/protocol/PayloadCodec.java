package org.holdfast.common.protocol;

/**
 * The u8 codec tag in front of a block payload in {@code BLOCKS} and {@code RESTORE_DATA}.
 * Kept as int constants, not an enum, because codecs travel in packed {@code byte[]} per frame.
 */
public final class PayloadCodec {
    /** An all-zero block: no fingerprint, no payload (RESTORE_DATA only). */
    public static final int ZERO = 0;
    /** The payload is the block itself, exactly {@code blockSize} bytes. */
    public static final int RAW = 1;
    /** The payload is one zstd frame that decompresses to exactly {@code blockSize} bytes. */
    public static final int ZSTD = 2;
    /**
     * Protocol 4: the payload is one zstd frame holding several blocks, this one first. In BLOCKS
     * the members are the {@link #FRAME_MEMBER} blocks right after it; in RESTORE_DATA the frame
     * carries its member count and this block's index in it.
     */
    public static final int ZSTD_FRAME = 3;
    /** Protocol 4: no payload; the block is a member of a {@link #ZSTD_FRAME} sent before it in the same message. */
    public static final int FRAME_MEMBER = 4;
    /** The first protocol version that may carry {@link #ZSTD_FRAME} and {@link #FRAME_MEMBER}. */
    public static final int FRAMES_SINCE_VERSION = 4;

    private PayloadCodec() {
    }

    /** True for a codec protocol versions 1 to 3 define. */
    public static boolean isKnown(int codec) {
        return codec == ZERO || codec == RAW || codec == ZSTD;
    }

    /** True for a codec of compressed frames (protocol 4). */
    public static boolean isFrame(int codec) {
        return codec == ZSTD_FRAME || codec == FRAME_MEMBER;
    }

    /** Human name for messages. */
    public static String name(int codec) {
        return switch (codec) {
            case ZERO -> "zero";
            case RAW -> "raw";
            case ZSTD -> "zstd";
            case ZSTD_FRAME -> "zstd-frame";
            case FRAME_MEMBER -> "frame-member";
            default -> "unknown(" + codec + ")";
        };
    }
}
