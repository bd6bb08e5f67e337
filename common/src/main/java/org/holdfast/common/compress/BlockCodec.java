package org.holdfast.common.compress;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdCompressCtx;
import com.github.luben.zstd.ZstdDecompressCtx;
import com.github.luben.zstd.ZstdException;
import org.holdfast.common.protocol.PayloadCodec;
import org.holdfast.common.protocol.ProtocolLimits;

/**
 * Compresses block payloads with zstd and decompresses them without ever producing more than one
 * block. A payload that zstd does not shrink by at least 1/32 is kept raw: it costs the receiver
 * no decompression and a frame no more than the block itself.
 *
 * <p>Owns two native zstd contexts: not thread-safe (one per worker thread) and must be
 * {@link #close() closed} by its creator.
 */
public final class BlockCodec implements AutoCloseable {
    /** The agent's default: zstd level 1 (about 300 MB/s per core here; negative levels trade ratio for speed). */
    public static final int DEFAULT_LEVEL = 1;

    private final ZstdCompressCtx compressor;
    private final ZstdDecompressCtx decompressor;
    private boolean closed;

    /** A codec compressing at {@link #DEFAULT_LEVEL}. */
    public BlockCodec() {
        this(DEFAULT_LEVEL);
    }

    /** A codec compressing at zstd {@code level} (negative = faster, 1..19 = denser). */
    public BlockCodec(int level) {
        compressor = new ZstdCompressCtx().setLevel(level).setChecksum(false).setContentSize(true);
        decompressor = new ZstdDecompressCtx();
    }

    /** The room {@link #compress} may need in {@code dst}: {@code blockSize + 4 KiB}. */
    public static int maxCompressedLength(int blockSize) {
        return ProtocolLimits.maxZstdPayload(blockSize);
    }

    /**
     * Compresses {@code len} bytes of {@code src} at {@code off} into {@code dst} at {@code dstOff}
     * (which needs {@code len} bytes of room; {@link #maxCompressedLength} avoids an exception per
     * incompressible block inside zstd-jni). Returns the compressed length, or -1 if the block
     * should travel raw (zstd did not pay); {@code dst} is then unspecified.
     */
    public int compress(byte[] src, int off, int len, byte[] dst, int dstOff) {
        int worthIt = len - len / 32;
        int room = dst.length - dstOff;
        if (room >= Zstd.compressBound(len)) {
            // Room for zstd's worst case: it cannot fail, so an incompressible block (every block of
            // encrypted or already compressed data) costs no exception, only the compression attempt.
            int n = compressor.compressByteArray(dst, dstOff, room, src, off, len);
            return n > 0 && n < worthIt ? n : -1;
        }
        room = Math.min(room, worthIt);
        if (room <= 0) {
            return -1;
        }
        try {
            int n = compressor.compressByteArray(dst, dstOff, room, src, off, len);
            return n > 0 && n < worthIt ? n : -1;
        } catch (ZstdException e) {
            // "Destination buffer is too small": the output would not have paid.
            return -1;
        }
    }

    /**
     * Decompresses one zstd payload into exactly {@code blockSize} bytes of {@code dst} at
     * {@code dstOff}. Throws {@link CorruptPayloadException} if the payload is over
     * {@code blockSize + 4 KiB}, declares or produces any other size, or is not valid zstd; never
     * writes more than {@code blockSize} bytes.
     */
    public void decompress(byte[] src, int off, int len, byte[] dst, int dstOff, int blockSize) {
        if (len > ProtocolLimits.maxZstdPayload(blockSize)) {
            throw new CorruptPayloadException("zstd payload of " + len + " bytes is over the limit for a " + blockSize + "-byte block");
        }
        if (dst.length - dstOff < blockSize) {
            throw new IllegalArgumentException("destination has room for " + (dst.length - dstOff) + " of " + blockSize + " bytes");
        }
        int n;
        try {
            n = decompressor.decompressByteArray(dst, dstOff, blockSize, src, off, len);
        } catch (ZstdException e) {
            throw new CorruptPayloadException("zstd payload does not decompress to at most " + blockSize + " bytes: " + e.getMessage());
        }
        if (n != blockSize) {
            throw new CorruptPayloadException("zstd payload decompressed to " + n + " bytes, expected " + blockSize);
        }
    }

    /**
     * Turns a payload of {@code codec} ({@link PayloadCodec#RAW} or {@link PayloadCodec#ZSTD}) into
     * the block's {@code blockSize} bytes at {@code dst}/{@code dstOff}.
     */
    public void decode(int codec, byte[] src, int off, int len, byte[] dst, int dstOff, int blockSize) {
        if (codec == PayloadCodec.RAW) {
            if (len != blockSize) {
                throw new CorruptPayloadException("raw payload of " + len + " bytes for a " + blockSize + "-byte block");
            }
            System.arraycopy(src, off, dst, dstOff, len);
        } else if (codec == PayloadCodec.ZSTD) {
            decompress(src, off, len, dst, dstOff, blockSize);
        } else {
            throw new CorruptPayloadException("codec " + PayloadCodec.name(codec) + " has no payload to decode");
        }
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            compressor.close();
            decompressor.close();
        }
    }
}
