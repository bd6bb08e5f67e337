package org.holdfast.common.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;

/**
 * Body layout of the data frames on the worker link (data on workers): the master's requests carry
 * a request id the worker's answer repeats, as the dedup frames do. All integers big-endian; every
 * count is checked against its limit before anything is read, and every body has exactly the bytes
 * its counts and lengths name.
 *
 * <pre>
 *  DATA_STORE       | requestId:u64 | codec:u8 | blockSize:u32 | count:u16 | fps:count*32 | storedLength:u32 | stored |
 *  DATA_STORED      | requestId:u64 | first:u64 | count:u16 |
 *  DATA_SYNC        | requestId:u64 |
 *  DATA_SYNCED      | requestId:u64 | durableBelow:u64 | [report]                             (report: cluster version 7)
 *  DATA_READ        | requestId:u64 | count:u32 | pbns:count*u64 |
 *  DATA_READ_ANSWER | requestId:u64 | count:u32 | count * (pbn:u64 | fp:32 | codec:u8 | rawLength:u32 | storedLength:u32 | stored) |
 *  DATA_FAILED      | requestId:u64 | message:str |
 *  DATA_REPAIR      | requestId:u64 | pbn:u64 | codec:u8 | blockSize:u32 | fp:32 | storedLength:u32 | stored |   (0x5E, cluster version 6)
 *  report           | full:u8 | unhashed:u32 | count:u32 | count * (logId:u32 | epoch:u64 | logEpoch:u64 | size:u64 | sha256:32) |
 *                    dropped:u32 | dropped * logId:u32 |
 * </pre>
 * A worker appends the sealed-log report ({@link SealedLogReport}) only on a link registered at
 * {@link Register#LOG_DIGEST_VERSION} or newer (an older master refuses the trailing bytes).
 * DATA_REPAIR is answered by DATA_STORED (first = pbn, count 1) or DATA_FAILED; a master sends it only
 * on a link registered at {@link Register#REPAIR_VERSION} or newer (an older worker closes its link on it).
 */
public final class DataFrames {
    private static final int MAX_MEMBERS = ProtocolLimits.MAX_FRAME_MEMBERS;
    /** Largest stored payload of a DATA_STORE: a frame of 1 MiB of blocks plus the zstd slack. */
    static final int MAX_STORED = ProtocolLimits.FRAME_MAX_RAW + ProtocolLimits.ZSTD_SLACK;

    private DataFrames() {
    }

    static boolean isData(MessageType type) {
        return type.code() >= MessageType.DATA_STORE.code() && type.code() <= MessageType.DATA_FAILED.code()
                || type == MessageType.DATA_REPAIR;
    }

    /**
     * Why a DATA_STORE's shape is wrong, or null: codec raw or zstd with count 1, or zstd-frame with
     * 1..{@link ProtocolLimits#MAX_FRAME_MEMBERS} members of at most {@link ProtocolLimits#FRAME_MAX_RAW}
     * bytes in all; a valid block size; stored bytes within {@link ProtocolLimits}' limit for the codec.
     */
    static String storeProblem(int codec, int blockSize, int count, long stored) {
        if (codec != PayloadCodec.RAW && codec != PayloadCodec.ZSTD && codec != PayloadCodec.ZSTD_FRAME) {
            return "codec " + PayloadCodec.name(codec) + " cannot be stored (raw, zstd or zstd-frame)";
        }
        if (!ProtocolLimits.isValidBlockSize(blockSize)) {
            return "block size " + blockSize + " is not a power of two in " + ProtocolLimits.MIN_BLOCK_SIZE + ".."
                    + ProtocolLimits.MAX_BLOCK_SIZE;
        }
        if (codec != PayloadCodec.ZSTD_FRAME && count != 1) {
            return "a " + PayloadCodec.name(codec) + " payload is one block, not " + count;
        }
        if (count < 1 || (long) count * blockSize > ProtocolLimits.FRAME_MAX_RAW) {
            return count + " blocks of " + blockSize + " bytes do not make a frame of 1.." + ProtocolLimits.FRAME_MAX_RAW + " bytes";
        }
        long max = switch (codec) {
            case PayloadCodec.RAW -> blockSize;
            case PayloadCodec.ZSTD -> ProtocolLimits.maxZstdPayload(blockSize);
            default -> ProtocolLimits.maxFramePayload(count, blockSize);
        };
        if (stored < 1 || stored > max || (codec == PayloadCodec.RAW && stored != blockSize)) {
            return "stored length " + stored + " does not fit a " + PayloadCodec.name(codec) + " payload of " + count + " blocks of "
                    + blockSize + " bytes (at most " + max + ")";
        }
        return null;
    }

    static void checkStore(int codec, int blockSize, int count, long fpBytes, long stored) {
        if (count < 1 || count > MAX_MEMBERS) {
            throw new IllegalArgumentException("DATA_STORE count " + count + " is not within 1.." + MAX_MEMBERS);
        }
        DedupFrames.checkLength("fps", fpBytes, count * 32L);
        String bad = storeProblem(codec, blockSize, count, stored);
        if (bad != null) {
            throw new IllegalArgumentException("DATA_STORE: " + bad);
        }
    }

    /** Why a block of a DATA_READ_ANSWER is wrong, or null: codec raw (stored = raw length) or zstd, a valid block size. */
    static String storedProblem(int codec, int rawLength, int storedLength) {
        if (codec != PayloadCodec.RAW && codec != PayloadCodec.ZSTD) {
            return "codec " + PayloadCodec.name(codec) + " is not a stored block's (raw or zstd)";
        }
        if (!ProtocolLimits.isValidBlockSize(rawLength)) {
            return "raw length " + rawLength + " is not a block size";
        }
        if (storedLength < 1 || storedLength > ProtocolLimits.maxZstdPayload(rawLength)
                || (codec == PayloadCodec.RAW && storedLength != rawLength)) {
            return "stored length " + storedLength + " does not fit a " + PayloadCodec.name(codec) + " block of " + rawLength + " bytes";
        }
        return null;
    }

    static int maxBody(MessageType type) {
        return switch (type) {
            case DATA_STORE -> 8 + 1 + 4 + 2 + MAX_MEMBERS * 32 + 4 + MAX_STORED;
            case DATA_STORED -> 8 + 8 + 2;
            case DATA_SYNC -> 8;
            case DATA_SYNCED -> 8 + 8 + SealedLogsFrames.MAX_REPORT_BYTES;
            case DATA_READ -> 8 + 4 + ProtocolLimits.MAX_DATA_READ * 8;
            case DATA_READ_ANSWER -> ProtocolLimits.MAX_BODY;
            case DATA_FAILED -> 8 + 2 + ProtocolLimits.MAX_ERROR_MESSAGE;
            case DATA_REPAIR -> 8 + 8 + 1 + 4 + 32 + 4 + ProtocolLimits.MAX_PAYLOAD;
            default -> throw new IllegalArgumentException(type + " is not a data frame");
        };
    }

    static long bodyBytes(Message m) {
        if (m instanceof DataStoreRequest s) {
            return 8 + 1 + 4 + 2 + s.count() * 32L + 4 + s.stored().length;
        } else if (m instanceof DataStored) {
            return 8 + 8 + 2;
        } else if (m instanceof DataSync) {
            return 8;
        } else if (m instanceof DataSynced s) {
            return 8 + 8 + (s.sealed() == null ? 0 : s.sealed().bodyBytes());
        } else if (m instanceof DataRead r) {
            return 8 + 4 + r.count() * 8L;
        } else if (m instanceof DataReadAnswer a) {
            return DataReadAnswer.FIXED_BYTES + (long) a.count() * DataReadAnswer.BLOCK_HEADER_BYTES + a.data().length;
        } else if (m instanceof DataFailed f) {
            return 8 + 2 + ByteBufUtil.utf8Bytes(f.message());
        } else if (m instanceof DataRepair r) {
            return 8 + 8 + 1 + 4 + 32 + 4 + r.stored().length;
        }
        throw new IllegalArgumentException(m.type() + " is not a data frame");
    }

    static void writeBody(Message m, ByteBuf out) {
        if (m instanceof DataStoreRequest s) {
            out.writeLong(s.requestId()).writeByte(s.codec()).writeInt(s.blockSize()).writeShort(s.count());
            out.writeBytes(s.fps(), 0, s.count() * 32);
            out.writeInt(s.stored().length).writeBytes(s.stored());
        } else if (m instanceof DataStored s) {
            out.writeLong(s.requestId()).writeLong(s.first()).writeShort(s.count());
        } else if (m instanceof DataSync s) {
            out.writeLong(s.requestId());
        } else if (m instanceof DataSynced s) {
            out.writeLong(s.requestId()).writeLong(s.durableBelow());
            if (s.sealed() != null) {
                SealedLogsFrames.writeReport(s.sealed(), out);
            }
        } else if (m instanceof DataRead r) {
            out.writeLong(r.requestId()).writeInt(r.count());
            for (long p : r.pbns()) {
                out.writeLong(p);
            }
        } else if (m instanceof DataReadAnswer a) {
            out.writeLong(a.requestId()).writeInt(a.count());
            int off = 0;
            for (int i = 0; i < a.count(); i++) {
                out.writeLong(a.pbns()[i]).writeBytes(a.fps(), i * 32, 32).writeByte(a.codecs()[i]).writeInt(a.rawLengths()[i])
                        .writeInt(a.storedLengths()[i]).writeBytes(a.data(), off, a.storedLengths()[i]);
                off += a.storedLengths()[i];
            }
        } else if (m instanceof DataFailed f) {
            out.writeLong(f.requestId());
            FrameEncoder.writeStr(out, f.message());
        } else if (m instanceof DataRepair r) {
            out.writeLong(r.requestId()).writeLong(r.pbn()).writeByte(r.codec()).writeInt(r.blockSize()).writeBytes(r.fp(), 0, 32);
            out.writeInt(r.stored().length).writeBytes(r.stored());
        } else {
            throw new IllegalArgumentException(m.type() + " is not a data frame");
        }
    }

    /** Parses a data frame's body; counts over their limit are LIMIT_EXCEEDED, short bodies and bad values BAD_FRAME. */
    static Message parseBody(MessageType type, ByteBuf b) {
        return switch (type) {
            case DATA_STORE -> {
                long id = BodyFields.u64(b, "requestId");
                int codec = BodyFields.u8(b, "codec");
                long blockSize = BodyFields.u32(b, "blockSize");
                int count = BodyFields.u16(b, "DATA_STORE count");
                if (count > MAX_MEMBERS) {
                    throw new ProtocolException(ErrorCode.LIMIT_EXCEEDED, "DATA_STORE count " + count + " is over its limit " + MAX_MEMBERS);
                }
                if (count < 1) {
                    throw new ProtocolException(ErrorCode.BAD_FRAME, "DATA_STORE count 0: a store carries at least one block");
                }
                byte[] fps = BodyFields.bytes(b, count * 32, "fingerprints");
                long stored = BodyFields.u32(b, "storedLength");
                if (stored > MAX_STORED) {
                    throw new ProtocolException(ErrorCode.LIMIT_EXCEEDED, "DATA_STORE stored length " + stored + " is over its limit "
                            + MAX_STORED);
                }
                String bad = storeProblem(codec, (int) Math.min(blockSize, Integer.MAX_VALUE), count, stored);
                if (bad != null) {
                    throw new ProtocolException(ErrorCode.BAD_FRAME, "DATA_STORE: " + bad);
                }
                yield new DataStoreRequest(id, codec, (int) blockSize, count, fps, BodyFields.bytes(b, (int) stored, "stored bytes"));
            }
            case DATA_STORED -> {
                long id = BodyFields.u64(b, "requestId");
                long first = BodyFields.u64(b, "first");
                int count = BodyFields.u16(b, "DATA_STORED count");
                if (count > MAX_MEMBERS) {
                    throw new ProtocolException(ErrorCode.LIMIT_EXCEEDED, "DATA_STORED count " + count + " is over its limit " + MAX_MEMBERS);
                }
                if (first < 1 || count < 1 || first > Long.MAX_VALUE - count) {
                    throw new ProtocolException(ErrorCode.BAD_FRAME, "DATA_STORED first PBN " + Long.toUnsignedString(first) + " and count "
                            + count + " do not name stored blocks");
                }
                yield new DataStored(id, first, count);
            }
            case DATA_SYNC -> new DataSync(BodyFields.u64(b, "requestId"));
            case DATA_SYNCED -> {
                long id = BodyFields.u64(b, "requestId");
                long below = BodyFields.u64(b, "durableBelow");
                if (below < 1) {
                    throw new ProtocolException(ErrorCode.BAD_FRAME, "DATA_SYNCED durableBelow " + Long.toUnsignedString(below)
                            + " is out of range");
                }
                yield new DataSynced(id, below, b.isReadable() ? SealedLogsFrames.parseReport(b, "DATA_SYNCED") : null);
            }
            case DATA_READ -> {
                long id = BodyFields.u64(b, "requestId");
                int count = BodyFields.count(b, ProtocolLimits.MAX_DATA_READ, "DATA_READ count", 1);
                BodyFields.need(b, count * 8, "PBNs");
                yield new DataRead(id, count, pbns(b, count));
            }
            case DATA_READ_ANSWER -> {
                long id = BodyFields.u64(b, "requestId");
                int count = BodyFields.count(b, ProtocolLimits.MAX_DATA_READ, "DATA_READ_ANSWER count", 1);
                // every block needs its header: a count the body cannot hold is refused before any array is sized by it
                BodyFields.need(b, count * DataReadAnswer.BLOCK_HEADER_BYTES, "block headers");
                long[] pbns = new long[count];
                byte[] fps = new byte[count * 32];
                byte[] codecs = new byte[count];
                int[] raw = new int[count];
                int[] stored = new int[count];
                int start = b.readerIndex();
                long total = 0;
                for (int i = 0; i < count; i++) {
                    pbns[i] = pbns(b, 1)[0];
                    BodyFields.need(b, 32, "fingerprint");
                    b.readBytes(fps, i * 32, 32);
                    int codec = BodyFields.u8(b, "codec");
                    long rawLength = BodyFields.u32(b, "rawLength");
                    long storedLength = BodyFields.u32(b, "storedLength");
                    String bad = rawLength > ProtocolLimits.MAX_BLOCK_SIZE || storedLength > ProtocolLimits.MAX_PAYLOAD
                            ? "lengths " + rawLength + " and " + storedLength + " are over a block's"
                            : storedProblem(codec, (int) rawLength, (int) storedLength);
                    if (bad != null) {
                        throw new ProtocolException(ErrorCode.BAD_FRAME, "DATA_READ_ANSWER block " + i + ": " + bad);
                    }
                    BodyFields.need(b, (int) storedLength, "stored bytes of block " + i);
                    b.skipBytes((int) storedLength);
                    codecs[i] = (byte) codec;
                    raw[i] = (int) rawLength;
                    stored[i] = (int) storedLength;
                    total += storedLength;
                }
                byte[] data = new byte[(int) total];
                int end = b.readerIndex();
                b.readerIndex(start);
                int off = 0;
                for (int i = 0; i < count; i++) {
                    b.skipBytes(DataReadAnswer.BLOCK_HEADER_BYTES);
                    b.readBytes(data, off, stored[i]);
                    off += stored[i];
                }
                b.readerIndex(end);
                yield new DataReadAnswer(id, count, pbns, fps, codecs, raw, stored, data);
            }
            case DATA_FAILED -> new DataFailed(BodyFields.u64(b, "requestId"),
                    BodyFields.str(b, "message", ProtocolLimits.MAX_ERROR_MESSAGE));
            case DATA_REPAIR -> {
                long id = BodyFields.u64(b, "requestId");
                long pbn = pbns(b, 1)[0];
                int codec = BodyFields.u8(b, "codec");
                long blockSize = BodyFields.u32(b, "blockSize");
                byte[] fp = BodyFields.bytes(b, 32, "fingerprint");
                long stored = BodyFields.u32(b, "storedLength");
                String bad = codec == PayloadCodec.ZSTD_FRAME ? "a repair carries one block (raw or zstd), not a frame"
                        : storeProblem(codec, (int) Math.min(blockSize, Integer.MAX_VALUE), 1, stored);
                if (bad != null) {
                    throw new ProtocolException(ErrorCode.BAD_FRAME, "DATA_REPAIR: " + bad);
                }
                yield new DataRepair(id, pbn, codec, (int) blockSize, fp, BodyFields.bytes(b, (int) stored, "stored bytes"));
            }
            default -> throw new IllegalArgumentException(type + " is not a data frame");
        };
    }

    /** {@code count} PBNs, each at least 1 (a request or an answer names stored blocks only). */
    private static long[] pbns(ByteBuf b, int count) {
        BodyFields.need(b, count * 8, "PBNs");
        long[] p = new long[count];
        for (int i = 0; i < count; i++) {
            p[i] = b.readLong();
            if (p[i] < 1) {
                throw new ProtocolException(ErrorCode.BAD_FRAME, "PBN " + Long.toUnsignedString(p[i]) + " of entry " + i
                        + " is not a stored block");
            }
        }
        return p;
    }
}
