package org.holdfast.server.store;

import static org.holdfast.server.store.Compactor.STORE;
import static org.holdfast.server.store.FormatVersions.DATA_LOG_HEADER_BYTES;
import static org.holdfast.server.store.FormatVersions.RECORD_HEADER_BYTES;

import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.zip.CRC32C;

/**
 * Step 1 of a compaction (see {@link Compactor}): the live records of a sealed log, each checked,
 * copied to {@code L.compact} and forced, frames with dead members repacked; a record that fails
 * its check stops the copy and is marked bad, so compaction never drops data.
 */
final class LiveCopy {
    // the compactor's log lines keep its logger's name
    private static final System.Logger LOG = System.getLogger(Compactor.class.getName());
    private static final int COPY_BUFFER_BYTES = 1 << 20;

    private final DataStore store;

    LiveCopy(DataStore store) {
        this.store = store;
    }

    /**
     * Step 1: copies the records to {@code L.compact}, forced; returns its size, or -1 if a record
     * failed a check. A block record and a wholly live frame are copied as they are; a frame with
     * dead members is repacked (see {@link FrameRepack}); a frame without a live member is not
     * named by any record here, so it is dropped. A non-negative {@code epoch} replaces the header's
     * creation time (the copy becomes a new object).
     */
    long copyLive(int id, Path logPath, LiveRecords records, long epoch) {
        Path tmp = store.dir().resolve(DataLog.fileName(id) + Compactor.SUFFIX);
        CRC32C crc = new CRC32C();
        byte[] rec = new byte[RECORD_HEADER_BYTES + FormatVersions.MAX_STORED_BYTES];
        ByteBuffer out = ByteBuffer.allocate(COPY_BUFFER_BYTES);
        long pos;
        try (FileChannel in = FileChannel.open(logPath, StandardOpenOption.READ);
             FileChannel dst = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                     StandardOpenOption.WRITE);
             FrameRepack repack = new FrameRepack()) {
            long inSize = in.size();
            // the file header is copied verbatim: same id, same creation time (with an archive a new epoch: a new object)
            readFully(in, ByteBuffer.wrap(rec, 0, DATA_LOG_HEADER_BYTES), 0, logPath);
            if (epoch >= 0) {
                Bytes.putLong(rec, 12, epoch);
            }
            out.put(rec, 0, DATA_LOG_HEADER_BYTES);
            pos = DATA_LOG_HEADER_BYTES;
            long written = 0;
            boolean[] done = new boolean[records.size()];
            for (int i = 0; i < records.size(); i++) {
                if (done[i]) {
                    continue; // a member of a frame handled with its first live member
                }
                int location = records.length(i);
                int stored = FrameFormat.recordStored(location);
                long off = records.offset(i);
                if (stored <= 0 || stored > FormatVersions.MAX_STORED_BYTES || off < DATA_LOG_HEADER_BYTES
                        || off + RECORD_HEADER_BYTES + stored > inSize) {
                    LOG.log(Level.WARNING, "not compacting data log {0}: pbn {1} has an impossible location", logPath, records.pbn(i));
                    Compactor.deleteQuietly(tmp);
                    return -1;
                }
                int len = RECORD_HEADER_BYTES + stored;
                readFully(in, ByteBuffer.wrap(rec, 0, len), off, logPath);
                String problem;
                byte[] src = rec;
                int newLen = len;
                if (FrameFormat.isMember(location)) {
                    problem = FrameFormat.check(rec, 0, stored, crc);
                    if (problem == null) {
                        problem = repack.plan(rec, records, i, done);
                    }
                    if (problem == null && repack.partlyDead()) {
                        problem = repack.repack(rec, records, crc);
                    }
                    src = repack.record();
                    newLen = repack.recordLength();
                } else {
                    problem = RecordFormat.check(rec, records.pbn(i), stored, crc);
                    done[i] = true;
                }
                if (problem != null) {
                    // leave a damaged log for fsck to report; never drop a record. Mark the block bad so that the
                    // next upload of its content repairs it (its record then is dead here and the log compacts).
                    LOG.log(Level.WARNING, "not compacting data log {0}: pbn {1} at {2}: {3}", logPath, records.pbn(i), off, problem);
                    store.markBad(records.pbn(i), records.fps(), i * org.holdfast.common.id.Fingerprint.BYTES, logPath.toString(), off, problem);
                    Compactor.deleteQuietly(tmp);
                    return -1;
                }
                if (out.remaining() < newLen) {
                    written += drain(dst, out, written);
                }
                out.put(src, 0, newLen);
                if (FrameFormat.isMember(location)) {
                    repack.placed(records, pos);
                } else {
                    records.setNewOffset(i, pos);
                }
                pos += newLen;
            }
            drain(dst, out, written);
            dst.force(true);
        } catch (CorruptDataException e) {
            Compactor.deleteQuietly(tmp);
            return -1;
        } catch (IOException e) {
            Compactor.deleteQuietly(tmp);
            throw StoreException.translate(STORE, tmp.toString(), null, e);
        }
        DataLog.forceDirectory(store.dir());
        return pos;
    }

    private static long drain(FileChannel ch, ByteBuffer buf, long at) throws IOException {
        buf.flip();
        long n = buf.remaining();
        while (buf.hasRemaining()) {
            at += ch.write(buf, at);
        }
        buf.clear();
        return n;
    }

    private static void readFully(FileChannel ch, ByteBuffer b, long pos, Path p) throws IOException {
        while (b.hasRemaining()) {
            int n = ch.read(b, pos);
            if (n < 0) {
                throw new CorruptDataException(STORE, p.toString(), null, "unexpected end of file at " + pos);
            }
            pos += n;
        }
    }
}
