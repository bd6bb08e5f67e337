package org.holdfast.common.protocol;

import static org.holdfast.common.protocol.BodyFields.count;
import static org.holdfast.common.protocol.BodyFields.lbn;
import static org.holdfast.common.protocol.BodyFields.need;
import static org.holdfast.common.protocol.BodyFields.u16;
import static org.holdfast.common.protocol.BodyFields.u32;
import static org.holdfast.common.protocol.BodyFields.u8;

import io.netty.buffer.ByteBuf;
import java.util.Arrays;
import org.holdfast.common.id.Fingerprint;

/**
 * Parses the payload tables of BLOCKS and RESTORE_DATA (docs/protocol.md, "Messages" and
 * "Protocol version 4: compressed frames"): each entry's codec, payload length against its limit
 * and the session's block size, and the zstd frames' member checks. The hot path of a backup and a
 * restore: a message's arrays are allocated once, its payloads stay in a retained slice of the
 * received bytes, and no text is built for an entry unless it fails.
 *
 * <pre>
 *  BLOCKS body        +--------+----------+----------+------------+---------------+-- ...
 *                     | n: u32 | lbn: u64 | codec:u8 | length:u32 | length bytes  |  n times
 *                     +--------+----------+----------+------------+---------------+-- ...
 *                     (protocol 4: codec 3 = zstd frame, codec 4 = frame member with length 0)
 *  RESTORE_DATA body  +-------------+--------+----------+--------------+------------+--------+-- ...
 *                     | startLbn:u64| n: u32 | codec:u8 | fp: 32 bytes | length:u32 | bytes  |  n times;
 *                     +-------------+--------+----------+--------------+------------+--------+-- ...
 *                                               fp, length and bytes are absent when codec = 0 (zero block)
 *     protocol 4, codec 3 (zstd frame):   | codec | fp | member:u16 | members:u16 | length:u32 | bytes |
 *     protocol 4, codec 4 (frame member): | codec | fp | member:u16 | ordinal:u16 |
 * </pre>
 *
 * <p>The frame codecs (3, 4) are refused unless {@link #protocolVersion(int)} was told a version of
 * at least 4: a connection that agreed on an older version never carries them. Payloads are checked
 * against {@link ProtocolLimits#MAX_PAYLOAD}, or exactly against the session's block size once
 * {@link #blockSize(int)} was told it.
 */
final class BlockPayloadParser {
    private static final int[] NO_FRAMES = new int[0];

    private int blockSize;
    // the version agreed in HELLO / HELLO_OK (0: not yet): compressed frames only from 4 on
    private int protocolVersion;

    /** The session's block size, already validated; 0 goes back to the absolute limits. */
    void blockSize(int blockSize) {
        this.blockSize = blockSize;
    }

    /** The protocol version the connection agreed on: the frame codecs need 4 or more. */
    void protocolVersion(int version) {
        this.protocolVersion = version;
    }

    /** BLOCKS: the entries' table, each payload checked, the payloads kept as one retained slice of {@code b}. */
    Blocks parseBlocks(ByteBuf b) {
        int n = count(b, ProtocolLimits.MAX_BLOCKS_PER_FRAME, "BLOCKS count", 0);
        long[] lbns = new long[n];
        byte[] codecs = new byte[n];
        int[] offsets = new int[n];
        int[] lengths = new int[n];
        int entriesStart = b.readerIndex();
        int frameStart = -1;
        for (int i = 0; i < n; i++) {
            lbns[i] = lbn(b, "lbn");
            int codec = u8(b, "codec");
            if (codec != PayloadCodec.RAW && codec != PayloadCodec.ZSTD && !PayloadCodec.isFrame(codec)) {
                throw new ProtocolException(ErrorCode.BAD_FRAME, "BLOCKS entry " + i + " has codec " + PayloadCodec.name(codec));
            }
            codecs[i] = (byte) codec;
            if (PayloadCodec.isFrame(codec)) {
                requireFrames(codec, "BLOCKS", i, lbns[i]);
                if (codec == PayloadCodec.ZSTD_FRAME) {
                    checkFrameEnd(lbns, codecs, lengths, frameStart, i);
                    frameStart = i;
                } else if (frameStart < 0) {
                    throw new ProtocolException(ErrorCode.BAD_FRAME, entry("BLOCKS", i, lbns[i])
                            + " is a frame member without a zstd frame before it");
                }
                lengths[i] = frameLength(b, codec, "BLOCKS", i, lbns[i]);
            } else {
                checkFrameEnd(lbns, codecs, lengths, frameStart, i);
                frameStart = -1;
                lengths[i] = payloadLength(b, codec, "BLOCKS", i);
            }
            offsets[i] = b.readerIndex() - entriesStart;
            b.skipBytes(lengths[i]);
        }
        checkFrameEnd(lbns, codecs, lengths, frameStart, n);
        ByteBuf data = b.retainedSlice(entriesStart, b.readerIndex() - entriesStart);
        return new Blocks(n, lbns, codecs, offsets, lengths, data);
    }

    /** Refuses a compressed-frame codec on a connection that did not agree on protocol 4. */
    private void requireFrames(int codec, String message, int entry, long lbn) {
        if (protocolVersion < PayloadCodec.FRAMES_SINCE_VERSION) {
            throw new ProtocolException(ErrorCode.BAD_FRAME, entry(message, entry, lbn) + " has codec " + PayloadCodec.name(codec)
                    + ", which needs protocol version " + PayloadCodec.FRAMES_SINCE_VERSION + "; this connection agreed on version "
                    + protocolVersion);
        }
    }

    /**
     * Checks the BLOCKS frame that starts at {@code start} and ends before {@code end} (nothing if
     * {@code start < 0}): at least 2 members, at most 1 MiB raw, a payload within its limit.
     */
    private void checkFrameEnd(long[] lbns, byte[] codecs, int[] lengths, int start, int end) {
        if (start < 0) {
            return;
        }
        int m = end - start;
        if (m < 2) {
            throw new ProtocolException(ErrorCode.BAD_FRAME, "zstd frame of LBN " + lbns[start]
                    + " has no frame member after it; a frame holds 2 or more blocks");
        }
        if (m > ProtocolLimits.MAX_FRAME_MEMBERS || (blockSize != 0 && (long) m * blockSize > ProtocolLimits.FRAME_MAX_RAW)) {
            throw new ProtocolException(ErrorCode.LIMIT_EXCEEDED, "zstd frame of LBN " + lbns[start] + " holds " + m
                    + " blocks, over the limit of " + ProtocolLimits.FRAME_MAX_RAW + " raw bytes");
        }
        if (blockSize != 0 && lengths[start] > ProtocolLimits.maxFramePayload(m, blockSize)) {
            throw new ProtocolException(ErrorCode.LIMIT_EXCEEDED, "zstd frame of LBN " + lbns[start] + " has a payload of "
                    + lengths[start] + " bytes, over the limit " + ProtocolLimits.maxFramePayload(m, blockSize) + " for " + m + " blocks");
        }
    }

    /** The length field of a frame block: 0 for a member, 1..MAX_PAYLOAD for a zstd frame (checked against its members later). */
    private int frameLength(ByteBuf b, int codec, String message, int entry, long lbn) {
        long len = u32(b, "payload length");
        if (codec == PayloadCodec.FRAME_MEMBER) {
            if (len != 0) {
                throw new ProtocolException(ErrorCode.BAD_FRAME,
                        entry(message, entry, lbn) + ": a frame member carries no payload, got length " + len);
            }
            return 0;
        }
        if (len > ProtocolLimits.MAX_PAYLOAD) {
            throw new ProtocolException(ErrorCode.LIMIT_EXCEEDED,
                    entry(message, entry, lbn) + ": zstd frame of " + len + " bytes is over its limit " + ProtocolLimits.MAX_PAYLOAD);
        }
        if (len == 0) {
            throw new ProtocolException(ErrorCode.BAD_FRAME, entry(message, entry, lbn) + ": zstd frame of length 0");
        }
        need(b, (int) len, "payload");
        return (int) len;
    }

    /** RESTORE_DATA: the entries' table, each payload and zstd frame checked, the payloads kept as one retained slice of {@code b}. */
    RestoreData parseRestoreData(ByteBuf b) {
        long startLbn = lbn(b, "startLbn");
        int n = count(b, ProtocolLimits.MAX_BLOCKS_PER_FRAME, "RESTORE_DATA count", 0);
        byte[] codecs = new byte[n];
        byte[] fps = new byte[n * Fingerprint.BYTES];
        int[] offsets = new int[n];
        int[] lengths = new int[n];
        int[] memberIndexes = new int[n];
        int[] frameOrdinals = new int[n];
        int[] frameBlocks = null;
        int[] frameMembers = null;
        int frames = 0;
        int entriesStart = b.readerIndex();
        for (int i = 0; i < n; i++) {
            int codec = u8(b, "codec");
            if (!PayloadCodec.isKnown(codec) && !PayloadCodec.isFrame(codec)) {
                throw new ProtocolException(ErrorCode.BAD_FRAME, "RESTORE_DATA entry " + i + " has unknown codec " + codec);
            }
            codecs[i] = (byte) codec;
            if (codec == PayloadCodec.ZERO) {
                continue;
            }
            need(b, Fingerprint.BYTES, "fingerprint");
            b.readBytes(fps, i * Fingerprint.BYTES, Fingerprint.BYTES);
            if (codec == PayloadCodec.FRAME_MEMBER) {
                requireFrames(codec, "RESTORE_DATA", i, startLbn + i);
                int member = u16(b, "member");
                int ordinal = u16(b, "ordinal");
                if (ordinal >= frames || member >= frameMembers[ordinal]) {
                    throw new ProtocolException(ErrorCode.BAD_FRAME, entry("RESTORE_DATA", i, startLbn + i)
                            + " is member " + member + " of frame " + ordinal + ", which this message did not send before it"
                            + (ordinal < frames ? " (it has " + frameMembers[ordinal] + " members)" : " (" + frames + " frames so far)"));
                }
                memberIndexes[i] = member;
                frameOrdinals[i] = ordinal;
                continue;
            }
            if (codec == PayloadCodec.ZSTD_FRAME) {
                requireFrames(codec, "RESTORE_DATA", i, startLbn + i);
                int member = u16(b, "member");
                int members = u16(b, "members");
                if (members < 1 || members > ProtocolLimits.MAX_FRAME_MEMBERS
                        || (blockSize != 0 && (long) members * blockSize > ProtocolLimits.FRAME_MAX_RAW)) {
                    throw new ProtocolException(ErrorCode.LIMIT_EXCEEDED, entry("RESTORE_DATA", i, startLbn + i)
                            + ": a frame of " + members + " blocks is outside 1 block .. " + ProtocolLimits.FRAME_MAX_RAW + " raw bytes");
                }
                if (member >= members) {
                    throw new ProtocolException(ErrorCode.BAD_FRAME,
                            entry("RESTORE_DATA", i, startLbn + i) + ": member " + member + " of a frame of " + members + " blocks");
                }
                if (frameBlocks == null) {
                    frameBlocks = new int[n];
                    frameMembers = new int[n];
                }
                lengths[i] = frameLength(b, codec, "RESTORE_DATA", i, startLbn + i);
                if (blockSize != 0 && lengths[i] > ProtocolLimits.maxFramePayload(members, blockSize)) {
                    throw new ProtocolException(ErrorCode.LIMIT_EXCEEDED, entry("RESTORE_DATA", i, startLbn + i) + ": zstd frame of "
                            + lengths[i] + " bytes is over the limit " + ProtocolLimits.maxFramePayload(members, blockSize) + " for "
                            + members + " blocks");
                }
                memberIndexes[i] = member;
                frameOrdinals[i] = frames;
                frameBlocks[frames] = i;
                frameMembers[frames] = members;
                frames++;
            } else {
                lengths[i] = payloadLength(b, codec, "RESTORE_DATA", i);
            }
            offsets[i] = b.readerIndex() - entriesStart;
            b.skipBytes(lengths[i]);
        }
        ByteBuf data = b.retainedSlice(entriesStart, b.readerIndex() - entriesStart);
        return new RestoreData(startLbn, n, codecs, fps, offsets, lengths, data, memberIndexes, frameOrdinals,
                frames == 0 ? NO_FRAMES : Arrays.copyOf(frameBlocks, frames), frames == 0 ? NO_FRAMES : Arrays.copyOf(frameMembers, frames));
    }

    /**
     * Reads entry {@code entry}'s payload length field and checks it against the codec's limit and the
     * remaining body; the entry is named ("BLOCKS entry 3") only when a check fails.
     */
    private int payloadLength(ByteBuf b, int codec, String message, int entry) {
        long len = u32(b, "payload length");
        long max = blockSize == 0 ? (codec == PayloadCodec.RAW ? ProtocolLimits.MAX_BLOCK_SIZE : ProtocolLimits.MAX_PAYLOAD)
                : (codec == PayloadCodec.RAW ? blockSize : ProtocolLimits.maxZstdPayload(blockSize));
        if (len > max) {
            throw new ProtocolException(ErrorCode.LIMIT_EXCEEDED, message + " entry " + entry + ": " + PayloadCodec.name(codec)
                    + " payload of " + len + " bytes is over its limit " + max);
        }
        if (len == 0 || (codec == PayloadCodec.RAW && blockSize != 0 && len != blockSize)) {
            throw new ProtocolException(ErrorCode.BAD_FRAME, message + " entry " + entry + ": " + PayloadCodec.name(codec)
                    + " payload of " + len + " bytes for block size " + blockSize);
        }
        need(b, (int) len, "payload");
        return (int) len;
    }

    /** Names entry {@code entry} of {@code message} in an error, as "BLOCKS entry 3 (LBN 17)": built only when a check fails. */
    private static String entry(String message, int entry, long lbn) {
        return message + " entry " + entry + " (LBN " + lbn + ")";
    }
}
