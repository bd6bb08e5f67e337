package org.holdfast.client.restore;

import com.github.luben.zstd.ZstdDecompressCtx;
import com.github.luben.zstd.ZstdException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.holdfast.client.net.FrameBuffers;
import org.holdfast.common.hash.BlockHasher;
import org.holdfast.common.hash.ZeroBlocks;
import org.holdfast.common.id.Fingerprint;
import org.holdfast.common.protocol.PayloadCodec;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.common.protocol.RestoreData;

/**
 * Decodes a piece of one RESTORE_DATA frame into a direct buffer, checks every block's SHA-256
 * against its fingerprint, and hands the verified runs to the {@link RestoreWriter}.
 *
 * <p>zstd payloads are decompressed straight from the frame's (direct) bytes into the output
 * buffer, raw payloads copied once, and the output is written with one positional write per run
 * of non-zero blocks (a file leaves zero blocks as holes; a device gets real zeros), so a block
 * costs one decompression, one hash and its share of a large write, and no allocation. A block
 * that does not decode to exactly the block size, or whose hash differs, raises
 * {@link BlockMismatchException} before anything of its run is written.
 *
 * <p>A block of a compressed frame (protocol 4) is copied out of the frame decoded whole into a
 * frame buffer; the last {@value #FRAME_SLOTS} frames a piece decoded are kept by ordinal, so a piece
 * decodes each frame it uses once however its blocks refer to it. Frame buffers are made on first
 * use, one megabyte at most each. An undecodable frame fails the restore naming the block being
 * restored, like a block whose hash differs.
 *
 * <p>One instance per worker thread (it owns a zstd context, a hasher and its buffers); {@link #close()} it.
 */
final class BlockVerifier implements AutoCloseable {
    private static final byte[] ZERO_FP = new byte[Fingerprint.BYTES];

    private final RestoreWriter writer;
    private final int blockSize;
    private final int maxZstd;
    private final ByteBuffer out;
    private final ByteBuffer staging; // payload copy when a frame's bytes are not one direct buffer
    private final ZstdDecompressCtx zstd = new ZstdDecompressCtx();
    private final BlockHasher hasher = new BlockHasher();
    private final byte[] digest = new byte[Fingerprint.BYTES];
    private final byte[] zeroBlock; // devices only
    /** Decoded frames kept per piece: a message's frames are usually referred to in order, rarely back. */
    static final int FRAME_SLOTS = 4;
    private final ByteBuffer[] frameSlots = new ByteBuffer[FRAME_SLOTS];
    private final int[] slotOrdinal = new int[FRAME_SLOTS];
    private int nextSlot;
    private ByteBuffer frameStaging; // a frame's payload when the message's bytes are not one direct buffer

    /** @param maxBlocks the largest piece {@link #verifyAndWrite} is given, in blocks */
    BlockVerifier(RestoreWriter writer, int blockSize, int maxBlocks) {
        this.writer = writer;
        this.blockSize = blockSize;
        this.maxZstd = ProtocolLimits.maxZstdPayload(blockSize);
        this.out = RestoreWriter.runBuffer(Math.multiplyExact(maxBlocks, blockSize)); // aligned: written with O_DIRECT
        this.staging = ByteBuffer.allocateDirect(maxZstd);
        this.zeroBlock = writer.writesZeros() ? new byte[blockSize] : null;
    }

    /**
     * Verifies blocks {@code from .. to - 1} of {@code d} and writes them; returns the number of
     * zero blocks among them. The caller keeps {@code d} alive (retained) for the call.
     */
    int verifyAndWrite(RestoreData d, int from, int to) {
        if ((long) (to - from) * blockSize > out.capacity()) {
            throw new IllegalArgumentException("piece of " + (to - from) + " blocks exceeds the buffer");
        }
        ByteBuffer src = FrameBuffers.directView(d);
        Arrays.fill(slotOrdinal, -1); // ordinals name frames of this message only
        boolean zerosAsHoles = !writer.writesZeros();
        int zeros = 0;
        int runStart = -1; // first block of the pending run of decoded blocks, relative to from
        for (int i = from; i < to; i++) {
            int slot = i - from;
            int outOff = slot * blockSize;
            int codec = d.codec(i);
            if (codec == PayloadCodec.ZERO) {
                zeros++;
                if (zerosAsHoles) {
                    if (runStart >= 0) {
                        write(d.startLbn() + from, runStart, slot);
                        runStart = -1;
                    }
                    continue;
                }
                out.put(outOff, zeroBlock, 0, blockSize);
            } else {
                if (PayloadCodec.isFrame(codec)) {
                    ByteBuffer frame = decodedFrame(d, i, src);
                    out.put(outOff, frame, d.memberIndex(i) * blockSize, blockSize);
                } else {
                    decode(d, i, codec, src, outOff);
                }
                verify(d, i, outOff);
            }
            if (runStart < 0) {
                runStart = slot;
            }
        }
        if (runStart >= 0) {
            write(d.startLbn() + from, runStart, to - from);
        }
        return zeros;
    }

    private void decode(RestoreData d, int i, int codec, ByteBuffer frame, int outOff) {
        int len = d.lengths()[i];
        int off = d.offsets()[i];
        ByteBuffer src = frame;
        if (src == null) { // a heap or composite frame buffer: stage the payload in direct memory
            if (len > maxZstd) {
                throw mismatch(d, i, "payload of " + len + " bytes is over the limit for a " + blockSize + "-byte block");
            }
            staging.clear().limit(len);
            FrameBuffers.copyPayload(d, off, staging);
            src = staging;
            off = 0;
        }
        if (codec == PayloadCodec.RAW) {
            if (len != blockSize) {
                throw mismatch(d, i, "raw payload of " + len + " bytes for a " + blockSize + "-byte block");
            }
            out.put(outOff, src, off, len);
            return;
        }
        if (codec != PayloadCodec.ZSTD) {
            throw mismatch(d, i, "codec " + PayloadCodec.name(codec) + " has no payload to decode");
        }
        if (len > maxZstd) {
            throw mismatch(d, i, "zstd payload of " + len + " bytes is over the limit for a " + blockSize + "-byte block");
        }
        int n;
        try {
            // bounds: outOff + blockSize <= out.capacity() (checked per piece); off + len inside the frame (checked by RestoreData)
            n = zstd.decompressDirectByteBuffer(out, outOff, blockSize, src, off, len);
        } catch (ZstdException e) {
            throw mismatch(d, i, "zstd payload does not decompress to at most " + blockSize + " bytes: " + e.getMessage());
        }
        if (n != blockSize) {
            throw mismatch(d, i, "zstd payload decompressed to " + n + " bytes, expected " + blockSize);
        }
    }

    /** The decoded frame holding block {@code i}, decoded now unless this piece already did. */
    private ByteBuffer decodedFrame(RestoreData d, int i, ByteBuffer message) {
        int ordinal = d.frameOrdinals()[i];
        for (int s = 0; s < FRAME_SLOTS; s++) {
            if (slotOrdinal[s] == ordinal) {
                return frameSlots[s];
            }
        }
        int fb = d.frameBlock(i);
        int members = d.frameMemberCount(i);
        long rawBytes = (long) members * blockSize;
        if (rawBytes > ProtocolLimits.FRAME_MAX_RAW) {
            throw mismatch(d, i, "its frame claims " + members + " blocks, over " + ProtocolLimits.FRAME_MAX_RAW + " bytes");
        }
        int len = d.lengths()[fb];
        int off = d.offsets()[fb];
        if (len > ProtocolLimits.maxFramePayload(members, blockSize)) {
            throw mismatch(d, i, "its zstd frame of " + len + " bytes is over the limit for " + members + " blocks");
        }
        ByteBuffer src = message;
        if (src == null) {
            if (frameStaging == null) {
                frameStaging = ByteBuffer.allocateDirect(ProtocolLimits.MAX_PAYLOAD);
            }
            frameStaging.clear().limit(len);
            FrameBuffers.copyPayload(d, off, frameStaging);
            src = frameStaging;
            off = 0;
        }
        int slot = nextSlot;
        nextSlot = (nextSlot + 1) % FRAME_SLOTS;
        if (frameSlots[slot] == null) {
            frameSlots[slot] = ByteBuffer.allocateDirect(ProtocolLimits.FRAME_MAX_RAW);
        }
        slotOrdinal[slot] = -1; // until it holds the whole frame
        int n;
        try {
            n = zstd.decompressDirectByteBuffer(frameSlots[slot], 0, (int) rawBytes, src, off, len);
        } catch (ZstdException e) {
            throw mismatch(d, i, "its zstd frame (sent with LBN " + d.lbn(fb) + ", " + members + " blocks) does not decompress: "
                    + e.getMessage());
        }
        if (n != rawBytes) {
            throw mismatch(d, i, "its zstd frame (sent with LBN " + d.lbn(fb) + ") decompressed to " + n + " bytes, expected "
                    + rawBytes + " for " + members + " blocks");
        }
        slotOrdinal[slot] = ordinal;
        return frameSlots[slot];
    }

    private void verify(RestoreData d, int i, int outOff) {
        byte[] fps = d.fingerprints();
        int fpOff = i * Fingerprint.BYTES;
        hasher.sha256(out, outOff, blockSize, digest, 0);
        if (Arrays.equals(digest, 0, Fingerprint.BYTES, fps, fpOff, fpOff + Fingerprint.BYTES)) {
            return;
        }
        // A zero block sent with a payload carries the all-zero fingerprint, which no SHA-256 matches.
        if (Arrays.equals(fps, fpOff, fpOff + Fingerprint.BYTES, ZERO_FP, 0, Fingerprint.BYTES)
                && ZeroBlocks.isZero(out, outOff, blockSize)) {
            return;
        }
        throw mismatch(d, i, "its SHA-256 does not match its fingerprint");
    }

    /** Writes slots [fromSlot, toSlot) of the output buffer; slot 0 is block {@code baseLbn}. */
    private void write(long baseLbn, int fromSlot, int toSlot) {
        out.limit(toSlot * blockSize).position(fromSlot * blockSize);
        writer.writeRun(baseLbn + fromSlot, out);
        out.clear();
    }

    private BlockMismatchException mismatch(RestoreData d, int i, String why) {
        return new BlockMismatchException(d.startLbn() + i, why);
    }

    @Override
    public void close() {
        zstd.close();
    }
}
