package org.holdfast.common.protocol;

import io.netty.buffer.ByteBuf;

/**
 * Body layout of the dedup frames on the worker link (remote dedup workers): the master's calls
 * carry a request id the worker's answer repeats, so several can be in flight. Arrays travel packed
 * as the engine holds them. All integers big-endian; counts are at most
 * {@link ProtocolLimits#MAX_DEDUP_ENTRIES} and every body has exactly the bytes its counts name.
 *
 * <pre>
 *  DEDUP_LOOKUP  | requestId:u64 | stream:u64 | count:u32 | fps:count*32 |
 *  DEDUP_ANSWER  | requestId:u64 | count:u32 | pbns:count*u64 | runs:count*u32 | load:7*u64 |
 *  DEDUP_RECORD  | requestId:u64 | stream:u64 | count:u32 | placed:u32 | fps:count*32 | pbns:count*u64 | isNew:ceil(count/8) |
 *  DEDUP_FORGET  | requestId:u64 | count:u32 | pbns:count*u64 | fps:count*32 |
 *  DEDUP_CONTROL | requestId:u64 | op:u8 | stream:u64 |
 *  DEDUP_DONE    | requestId:u64 | load:7*u64 | [startedOverAt:u64 | reason:u8]   (the part in [] only at cluster version 2)
 *  DEDUP_FAILED  | requestId:u64 | message:str |
 *  DEDUP_PROBE   | requestId:u64 | stream:u64 | key:u64 | count:u32 | samples:u32 | words:samples*u64 |
 *  DEDUP_CANDIDATES | requestId:u64 | candidates:u32 | load:7*u64 |
 * </pre>
 */
public final class DedupFrames {
    /** Load values: stored entries, containers, lookups, SFI hits, containers loaded, busy ns, memory bytes. */
    public static final int LOAD_FIELDS = 7;
    private static final int LOAD_BYTES = LOAD_FIELDS * 8;
    /** DEDUP_DONE's optional start-over report (cluster version 2): u64 time, u8 reason. */
    private static final int START_OVER_BYTES = 8 + 1;
    private static final int MAX = ProtocolLimits.MAX_DEDUP_ENTRIES;

    private DedupFrames() {
    }

    static void checkCount(String frame, int count) {
        if (count < 0 || count > MAX) {
            throw new IllegalArgumentException(frame + " count " + count + " is not within 0.." + MAX);
        }
    }

    static void checkLength(String field, long actual, long expected) {
        if (actual != expected) {
            throw new IllegalArgumentException(field + " has " + actual + " values, the count needs exactly " + expected);
        }
    }

    static int maxBody(MessageType type) {
        return switch (type) {
            case DEDUP_LOOKUP -> 8 + 8 + 4 + MAX * 32;
            case DEDUP_ANSWER -> 8 + 4 + MAX * 12 + LOAD_BYTES;
            case DEDUP_RECORD -> 8 + 8 + 4 + 4 + MAX * 40 + MAX / 8;
            case DEDUP_FORGET -> 8 + 4 + MAX * 40;
            case DEDUP_CONTROL -> 8 + 1 + 8;
            case DEDUP_DONE -> 8 + LOAD_BYTES + START_OVER_BYTES;
            case DEDUP_FAILED -> 8 + 2 + ProtocolLimits.MAX_ERROR_MESSAGE;
            case DEDUP_PROBE -> 8 + 8 + 8 + 4 + 4 + MAX * 8;
            case DEDUP_CANDIDATES -> 8 + 4 + LOAD_BYTES;
            default -> throw new IllegalArgumentException(type + " is not a cluster frame");
        };
    }

    static long bodyBytes(Message m) {
        if (m instanceof DedupLookup l) {
            return 8 + 8 + 4 + l.count() * 32L;
        } else if (m instanceof DedupAnswer a) {
            return 8 + 4 + a.count() * 12L + LOAD_BYTES;
        } else if (m instanceof DedupRecord r) {
            return 8 + 8 + 4 + 4 + r.count() * 40L + (r.count() + 7) / 8;
        } else if (m instanceof DedupForget f) {
            return 8 + 4 + f.count() * 40L;
        } else if (m instanceof DedupControl) {
            return 8 + 1 + 8;
        } else if (m instanceof DedupDone d) {
            return 8 + LOAD_BYTES + (d.startedOver() ? START_OVER_BYTES : 0);
        } else if (m instanceof DedupFailed f) {
            return 8 + 2 + io.netty.buffer.ByteBufUtil.utf8Bytes(f.message());
        } else if (m instanceof DedupProbe p) {
            return 8 + 8 + 8 + 4 + 4 + p.samples() * 8L;
        } else if (m instanceof DedupCandidates) {
            return 8 + 4 + LOAD_BYTES;
        }
        throw new IllegalArgumentException(m.type() + " is not a cluster frame");
    }

    static void writeBody(Message m, ByteBuf out) {
        if (m instanceof DedupLookup l) {
            out.writeLong(l.requestId()).writeLong(l.stream()).writeInt(l.count());
            out.writeBytes(l.fps(), 0, l.count() * 32);
        } else if (m instanceof DedupAnswer a) {
            out.writeLong(a.requestId()).writeInt(a.count());
            for (int i = 0; i < a.count(); i++) {
                out.writeLong(a.pbns()[i]);
            }
            for (int i = 0; i < a.count(); i++) {
                out.writeInt(a.runs()[i]);
            }
            writeLoad(out, a.load());
        } else if (m instanceof DedupRecord r) {
            out.writeLong(r.requestId()).writeLong(r.stream()).writeInt(r.count()).writeInt(r.placed());
            out.writeBytes(r.fps(), 0, r.count() * 32);
            for (int i = 0; i < r.count(); i++) {
                out.writeLong(r.pbns()[i]);
            }
            byte[] bits = new byte[(r.count() + 7) / 8];
            for (int i = 0; i < r.count(); i++) {
                if (r.isNew()[i]) {
                    bits[i >>> 3] |= (byte) (1 << (i & 7));
                }
            }
            out.writeBytes(bits);
        } else if (m instanceof DedupForget f) {
            out.writeLong(f.requestId()).writeInt(f.count());
            for (int i = 0; i < f.count(); i++) {
                out.writeLong(f.pbns()[i]);
            }
            out.writeBytes(f.fps(), 0, f.count() * 32);
        } else if (m instanceof DedupControl c) {
            out.writeLong(c.requestId()).writeByte(c.op()).writeLong(c.stream());
        } else if (m instanceof DedupDone d) {
            out.writeLong(d.requestId());
            writeLoad(out, d.load());
            if (d.startedOver()) {
                out.writeLong(d.startedOverAtMillis()).writeByte(d.startOverReason());
            }
        } else if (m instanceof DedupFailed f) {
            out.writeLong(f.requestId());
            FrameEncoder.writeStr(out, f.message());
        } else if (m instanceof DedupProbe p) {
            out.writeLong(p.requestId()).writeLong(p.stream()).writeLong(p.key()).writeInt(p.count()).writeInt(p.samples());
            for (int i = 0; i < p.samples(); i++) {
                out.writeLong(p.words()[i]);
            }
        } else if (m instanceof DedupCandidates c) {
            out.writeLong(c.requestId()).writeInt(c.candidates());
            writeLoad(out, c.load());
        } else {
            throw new IllegalArgumentException(m.type() + " is not a cluster frame");
        }
    }

    private static void writeLoad(ByteBuf out, long[] load) {
        for (long v : load) {
            out.writeLong(v);
        }
    }

    /** Parses a dedup frame's body; counts over the limit are LIMIT_EXCEEDED, short bodies and bad values BAD_FRAME. */
    static Message parseBody(MessageType type, ByteBuf b) {
        return switch (type) {
            case DEDUP_LOOKUP -> {
                long id = BodyFields.u64(b, "requestId");
                long stream = BodyFields.u64(b, "stream");
                int count = BodyFields.count(b, MAX, "DEDUP_LOOKUP count", 0);
                yield new DedupLookup(id, stream, count, BodyFields.bytes(b, count * 32, "fingerprints"));
            }
            case DEDUP_ANSWER -> {
                long id = BodyFields.u64(b, "requestId");
                int count = BodyFields.count(b, MAX, "DEDUP_ANSWER count", 0);
                BodyFields.need(b, count * 12 + LOAD_BYTES, "PBNs, runs and load");
                long[] pbns = pbns(b, count);
                int[] runs = new int[count];
                for (int i = 0; i < count; i++) {
                    long run = b.readUnsignedInt();
                    if (run > count - i) {
                        throw new ProtocolException(ErrorCode.BAD_FRAME, "DEDUP_ANSWER run " + run + " of entry " + i
                                + " runs past the " + count + " entries");
                    }
                    runs[i] = (int) run;
                }
                yield new DedupAnswer(id, count, pbns, runs, load(b));
            }
            case DEDUP_RECORD -> {
                long id = BodyFields.u64(b, "requestId");
                long stream = BodyFields.u64(b, "stream");
                int count = BodyFields.count(b, MAX, "DEDUP_RECORD count", 0);
                long placed = BodyFields.u32(b, "placed");
                if (placed > count) {
                    throw new ProtocolException(ErrorCode.BAD_FRAME, "DEDUP_RECORD placed " + placed + " is over its count " + count);
                }
                BodyFields.need(b, count * 40 + (count + 7) / 8, "fingerprints, PBNs and new flags");
                byte[] fps = BodyFields.bytes(b, count * 32, "fingerprints");
                long[] pbns = pbns(b, count);
                byte[] bits = BodyFields.bytes(b, (count + 7) / 8, "new flags");
                if (count % 8 != 0 && (bits[bits.length - 1] & 0xff) >>> (count % 8) != 0) {
                    throw new ProtocolException(ErrorCode.BAD_FRAME, "DEDUP_RECORD new flags set beyond count " + count);
                }
                boolean[] isNew = new boolean[count];
                for (int i = 0; i < count; i++) {
                    isNew[i] = (bits[i >>> 3] & (1 << (i & 7))) != 0;
                }
                yield new DedupRecord(id, stream, count, (int) placed, fps, pbns, isNew);
            }
            case DEDUP_FORGET -> {
                long id = BodyFields.u64(b, "requestId");
                int count = BodyFields.count(b, MAX, "DEDUP_FORGET count", 0);
                BodyFields.need(b, count * 40, "PBNs and fingerprints");
                long[] pbns = pbns(b, count);
                yield new DedupForget(id, count, pbns, BodyFields.bytes(b, count * 32, "fingerprints"));
            }
            case DEDUP_CONTROL -> {
                long id = BodyFields.u64(b, "requestId");
                int op = BodyFields.u8(b, "op");
                if (op < DedupControl.END_STREAM || op > DedupControl.LOAD) {
                    throw new ProtocolException(ErrorCode.BAD_FRAME, "unknown DEDUP_CONTROL op " + op);
                }
                yield new DedupControl(id, op, BodyFields.u64(b, "stream"));
            }
            case DEDUP_DONE -> {
                long id = BodyFields.u64(b, "requestId");
                BodyFields.need(b, LOAD_BYTES, "load");
                long[] load = load(b);
                if (!b.isReadable()) {
                    yield new DedupDone(id, load);
                }
                long at = BodyFields.u64(b, "startedOverAt");
                int reason = BodyFields.u8(b, "startOverReason");
                if (at <= 0 || !StartOverReason.isCode(reason)) {
                    throw new ProtocolException(ErrorCode.BAD_FRAME, "DEDUP_DONE start-over needs a time above 0 and a reason 1.."
                            + DedupDone.STARTED_OVER_UNREADABLE_OWNER + ", got " + at + " and " + reason);
                }
                yield new DedupDone(id, load, at, reason);
            }
            case DEDUP_FAILED -> new DedupFailed(BodyFields.u64(b, "requestId"),
                    BodyFields.str(b, "message", ProtocolLimits.MAX_ERROR_MESSAGE));
            case DEDUP_PROBE -> {
                long id = BodyFields.u64(b, "requestId");
                long stream = BodyFields.u64(b, "stream");
                long key = BodyFields.u64(b, "key");
                int count = BodyFields.count(b, MAX, "DEDUP_PROBE count", 0);
                int samples = BodyFields.count(b, MAX, "DEDUP_PROBE samples", 0);
                if (samples > count) {
                    throw new ProtocolException(ErrorCode.BAD_FRAME, "DEDUP_PROBE samples " + samples + " is over its count " + count);
                }
                BodyFields.need(b, samples * 8, "fingerprint words");
                long[] words = new long[samples];
                for (int i = 0; i < samples; i++) {
                    words[i] = b.readLong();
                }
                yield new DedupProbe(id, stream, key, count, samples, words);
            }
            case DEDUP_CANDIDATES -> {
                long id = BodyFields.u64(b, "requestId");
                long candidates = BodyFields.u32(b, "candidates");
                if (candidates > Integer.MAX_VALUE) {
                    throw new ProtocolException(ErrorCode.BAD_FRAME, "DEDUP_CANDIDATES candidates " + candidates + " is out of range");
                }
                BodyFields.need(b, LOAD_BYTES, "load");
                yield new DedupCandidates(id, (int) candidates, load(b));
            }
            default -> throw new IllegalArgumentException(type + " is not a cluster frame");
        };
    }

    /** {@code count} PBNs; each must fit a signed long (0 = none). */
    private static long[] pbns(ByteBuf b, int count) {
        long[] p = new long[count];
        for (int i = 0; i < count; i++) {
            p[i] = b.readLong();
            if (p[i] < 0) {
                throw new ProtocolException(ErrorCode.BAD_FRAME, "PBN " + Long.toUnsignedString(p[i]) + " of entry " + i
                        + " is out of range");
            }
        }
        return p;
    }

    private static long[] load(ByteBuf b) {
        long[] l = new long[LOAD_FIELDS];
        for (int i = 0; i < LOAD_FIELDS; i++) {
            l[i] = b.readLong();
            if (l[i] < 0) {
                throw new ProtocolException(ErrorCode.BAD_FRAME, "load value " + i + " is negative");
            }
        }
        return l;
    }
}
