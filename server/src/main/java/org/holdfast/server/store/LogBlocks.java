package org.holdfast.server.store;

import static org.holdfast.server.store.FormatVersions.RECORD_HEADER_BYTES;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;
import org.holdfast.common.compress.BlockCodec;
import org.holdfast.common.compress.CorruptPayloadException;
import org.holdfast.common.hash.BlockHasher;
import org.holdfast.common.hash.ZeroBlocks;
import org.holdfast.common.id.Fingerprint;

/**
 * The blocks of a whole data log file with their fingerprints: the record walk of {@link LogRecords}
 * (PBN, offset, location length field), and each block decoded and hashed (SHA-256), because a
 * record carries its PBN but not its fingerprint, which a location must hold. A frame is decoded
 * once for all its members; an all-zero member gets the zero fingerprint, as the ingest gives it.
 * Every record is checked (checksums, decoding) as a read would: a damaged one is corrupt data.
 */
final class LogBlocks {
    /** Receives one block; {@code fp} is reused between calls. */
    @FunctionalInterface
    interface Visitor {
        void visit(long pbn, long offset, int lengthField, byte[] fp);
    }

    /** Receives a block whose record failed its check, instead of the walk failing (a read-only copy serves the rest). */
    @FunctionalInterface
    interface Damaged {
        void damaged(long pbn, String problem);
    }

    private LogBlocks() {
    }

    /** Visits every block of {@code file}; a record that fails its check fails the walk. Returns where the walk stopped. */
    static long walk(Path file, Visitor visitor) {
        return walk(file, visitor, null);
    }

    /**
     * As {@link #walk(Path, Visitor)}; with {@code damaged} non-null a block whose record fails its
     * check (checksum, decoding, member map) goes to it and the walk goes on. A damaged record
     * header ends the walk as a torn tail would ({@link LogRecords}): its blocks, and every record
     * after it, are not visited. Returns the offset the walk stopped at; below the file's size, the
     * rest was not read. A sealed log has no torn tail (it is sealed only after a roll flushed its
     * last record whole, uploaded whole only once the durable point lies in a later log, and never
     * padded or preallocated), so there that is damage, which the caller must not take for the end.
     */
    static long walk(Path file, Visitor visitor, Damaged damaged) {
        byte[] record = new byte[RECORD_HEADER_BYTES + FormatVersions.MAX_STORED_BYTES];
        byte[] frame = new byte[FormatVersions.FRAME_MAX_RAW];
        byte[] raw = new byte[FormatVersions.FRAME_MAX_RAW];
        byte[] fp = new byte[Fingerprint.BYTES];
        CRC32C crc = new CRC32C();
        long[] frameAt = {-1};
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ); BlockCodec codec = new BlockCodec()) {
            return LogRecords.walk(file, (pbn, offset, lengthField) -> {
                try {
                    hash(ch, codec, crc, record, frame, raw, fp, frameAt, file, pbn, offset, lengthField);
                } catch (CorruptDataException e) {
                    if (damaged == null) {
                        throw e;
                    }
                    damaged.damaged(pbn, e.getMessage());
                    return;
                }
                visitor.visit(pbn, offset, lengthField, fp);
            });
        } catch (IOException e) {
            throw StoreException.translate("range-takeover", file.toString(), null, e);
        }
    }

    /** Reads, checks and hashes the block {@code pbn} of the record at {@code offset} into {@code fp}. */
    private static void hash(FileChannel ch, BlockCodec codec, CRC32C crc, byte[] record, byte[] frame, byte[] raw, byte[] fp,
                             long[] frameAt, Path file, long pbn, long offset, int lengthField) {
        int stored = FrameFormat.recordStored(lengthField);
        try {
            if (!FrameFormat.isMember(lengthField)) {
                read(ch, offset, record, RECORD_HEADER_BYTES + stored, file);
                String problem = RecordFormat.check(record, pbn, stored, crc);
                if (problem != null) {
                    throw new CorruptDataException("range-takeover", file.toString(), "pbn " + pbn, problem + " at offset " + offset);
                }
                int rawLength = RecordFormat.rawLength(record);
                if (rawLength <= 0 || rawLength > raw.length) {
                    throw new CorruptDataException("range-takeover", file.toString(), "pbn " + pbn, "raw length " + rawLength
                            + " at offset " + offset + " is outside 1.." + raw.length);
                }
                codec.decode(RecordFormat.codec(record), record, RECORD_HEADER_BYTES, stored, raw, 0, rawLength);
                BlockHasher.forCurrentThread().sha256(raw, 0, rawLength, fp, 0);
            } else {
                if (frameAt[0] != offset) {
                    read(ch, offset, record, RECORD_HEADER_BYTES + stored, file);
                    String problem = FrameFormat.check(record, 0, stored, crc);
                    if (problem != null) {
                        throw new CorruptDataException("range-takeover", file.toString(), "pbn " + pbn, problem + " at offset " + offset);
                    }
                    int payload = FrameFormat.payloadOffset(record, 0);
                    codec.decompress(record, payload, RECORD_HEADER_BYTES + stored - payload, frame, 0, FrameFormat.rawLength(record, 0));
                    frameAt[0] = offset;
                }
                int k = FrameFormat.memberIndex(record, 0, pbn);
                int bs = FrameFormat.blockSize(record, 0);
                if (k < 0) {
                    throw new CorruptDataException("range-takeover", file.toString(), "pbn " + pbn, "the frame at offset " + offset
                            + " does not hold this PBN");
                }
                if (ZeroBlocks.isZero(frame, k * bs, bs)) {
                    java.util.Arrays.fill(fp, (byte) 0);
                } else {
                    BlockHasher.forCurrentThread().sha256(frame, k * bs, bs, fp, 0);
                }
            }
        } catch (CorruptPayloadException e) {
            throw new CorruptDataException("range-takeover", file.toString(), "pbn " + pbn, "the record at offset " + offset
                    + " does not decode: " + e.getMessage());
        }
    }

    private static void read(FileChannel ch, long at, byte[] dst, int len, Path file) {
        ByteBuffer buf = ByteBuffer.wrap(dst, 0, len);
        try {
            while (buf.hasRemaining()) {
                if (ch.read(buf, at + buf.position()) < 0) {
                    throw new CorruptDataException("range-takeover", file.toString(), null, "the log ends inside the record at " + at);
                }
            }
        } catch (IOException e) {
            throw StoreException.translate("range-takeover", file.toString(), null, e);
        }
    }
}
