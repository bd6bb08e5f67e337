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

    private PayloadCodec() {
    }

    /** True for a codec v1 defines. */
    public static boolean isKnown(int codec) {
        return codec == ZERO || codec == RAW || codec == ZSTD;
    }

    /** Human name for messages. */
    public static String name(int codec) {
        return switch (codec) {
            case ZERO -> "zero";
            case RAW -> "raw";
            case ZSTD -> "zstd";
            default -> "unknown(" + codec + ")";
        };
    }
}
