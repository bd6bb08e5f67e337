package org.holdfast.server.restore;

import java.io.IOException;
import java.io.OutputStream;
import java.util.Arrays;
import org.holdfast.common.compress.BlockCodec;
import org.holdfast.common.compress.CorruptPayloadException;
import org.holdfast.common.hash.BlockHasher;
import org.holdfast.common.hash.ZeroBlocks;
import org.holdfast.common.id.Fingerprint;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.MapCursor;
import org.holdfast.server.catalog.SnapshotRecord;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.store.BlockBatch;
import org.holdfast.server.store.BlockHome;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.LocalBlockHome;

/**
 * A snapshot's raw image as a byte sequence of {@link #length()} bytes, for the HTTP image
 * download: {@link #write} writes any byte range of it to a stream, verifying every block before
 * one byte of it is written.
 *
 * <p>Reads like {@link org.holdfast.server.ingest.RestoreStream}: one ordered scan of the versioned
 * map, blocks read in batches with {@link BlockHome#readBatch} (the master's store checks each record's header and
 * CRC32C; with the blocks on the workers each range's owner does, and answers them as stored). Unlike the agent
 * restore, which passes stored bytes through and lets the agent verify, this decodes each block
 * (zstd, raw or a member of a frame, to exactly the block size) and checks its SHA-256 against the block's fingerprint,
 * because the HTTP client has no fingerprints to check against. A block that fails any check
 * raises {@link CorruptDataException} before its bytes reach the stream; what was written before
 * it is correct. Unmapped LBNs read as zeros. Memory: about 1 MiB per call, whatever the image size.
 */
public final class SnapshotImage {
    /** Blocks per batch read: a batch is checked whole before any of it is sent, so this is also what the client waits for. */
    private static final int LOOKAHEAD = 256;
    private static final int BATCH_BUFFER_BYTES = 1 << 20;
    private static final int ZEROS_BYTES = 64 << 10;
    private static final byte[] ZERO_FP = new byte[Fingerprint.BYTES];
    private static final byte[] ZEROS = new byte[ZEROS_BYTES];

    private final Catalog catalog;
    private final BlockHome store;
    private final VolumeRecord volume;
    private final SnapshotRecord snapshot;

    /** The image of {@code snapshot} with its blocks in {@code store} itself. */
    public SnapshotImage(Catalog catalog, DataStore store, VolumeRecord volume, SnapshotRecord snapshot) {
        this(catalog, new LocalBlockHome(store), volume, snapshot);
    }

    /** The image of {@code snapshot} with its blocks read through {@code store} (the master's, or its workers'). */
    public SnapshotImage(Catalog catalog, BlockHome store, VolumeRecord volume, SnapshotRecord snapshot) {
        this.catalog = catalog;
        this.store = store;
        this.volume = volume;
        this.snapshot = snapshot;
    }

    /** The image's size in bytes (the volume's size at the backup; the last block may be partial). */
    public long length() {
        return snapshot.volumeBytes();
    }

    public SnapshotRecord snapshot() {
        return snapshot;
    }

    /** The PBN of the first stored block in image bytes {@code first..last} (inclusive), or 0 if they hold none (zeros only). */
    public long firstPbn(long first, long last) {
        long blockSize = snapshot.blockSize();
        try (MapCursor cursor = catalog.mapCursor(volume.internalId())) {
            cursor.startScan(snapshot.sequence(), first / blockSize, last / blockSize + 1);
            while (cursor.nextMapped()) {
                if (cursor.pbn() != 0) {
                    return cursor.pbn();
                }
            }
        }
        return 0;
    }

    /**
     * Writes image bytes {@code first..last} (inclusive) to {@code out}; does not flush or close it.
     *
     * @throws CorruptDataException if a block of the range fails its record check, does not decode
     *                              to the block size, or does not match its fingerprint; its bytes
     *                              and everything after them were not written
     * @throws IOException          if {@code out} fails (the client went away)
     */
    public void write(long first, long last, OutputStream out) throws IOException {
        if (first < 0 || last < first || last >= length()) {
            throw new IllegalArgumentException("byte range " + first + "-" + last + " is not inside the image of " + length() + " bytes");
        }
        Range r = new Range(first, last, snapshot.blockSize(), out);
        long endLbn = last / r.blockSize + 1;
        long[] lbns = new long[LOOKAHEAD];
        long[] pbns = new long[LOOKAHEAD];
        BlockBatch batch = new BlockBatch(LOOKAHEAD, BATCH_BUFFER_BYTES, ProtocolLimits.maxZstdPayload(r.blockSize));
        try (MapCursor cursor = catalog.mapCursor(volume.internalId()); BlockCodec codec = new BlockCodec()) {
            cursor.startScan(snapshot.sequence(), first / r.blockSize, endLbn);
            boolean more = true;
            while (more) {
                int n = 0;
                while (n < LOOKAHEAD) {
                    if (!cursor.nextMapped()) {
                        more = false;
                        break;
                    }
                    if (cursor.pbn() != 0) { // PBN 0: zeroed since an older snapshot, reads as zeros
                        lbns[n] = cursor.lbn();
                        pbns[n] = cursor.pbn();
                        n++;
                    }
                }
                for (int i = 0; i < n; ) {
                    int got = store.readBatch(pbns, i, n - i, batch);
                    for (int k = 0; k < got; k++) {
                        r.zerosUpTo(lbns[i + k]);
                        r.block(decodeAndVerify(batch, k, lbns[i + k], codec, r), lbns[i + k]);
                    }
                    i += got;
                }
            }
            r.zerosUpTo(endLbn);
        }
    }

    private byte[] decodeAndVerify(BlockBatch batch, int k, long lbn, BlockCodec codec, Range r) {
        byte[] block = r.block;
        try {
            if (batch.rawLength(k) != r.blockSize) {
                throw corrupt(batch, k, lbn, "its record holds a block of " + batch.rawLength(k) + " bytes, the snapshot's are " + r.blockSize);
            }
            batch.decode(k, codec, block, 0); // a frame member: its frame is decoded once for the members that follow
        } catch (CorruptPayloadException e) {
            throw corrupt(batch, k, lbn, e.getMessage());
        }
        r.hasher.sha256(block, 0, r.blockSize, r.digest, 0);
        byte[] fps = batch.fingerprints();
        int at = batch.fingerprintOffset(k);
        boolean matches = Arrays.equals(r.digest, 0, Fingerprint.BYTES, fps, at, at + Fingerprint.BYTES)
                // a zero block stored with a payload carries the all-zero fingerprint, which no SHA-256 matches
                || Arrays.equals(fps, at, at + Fingerprint.BYTES, ZERO_FP, 0, Fingerprint.BYTES) && ZeroBlocks.isZero(block, 0, r.blockSize);
        if (!matches) {
            throw corrupt(batch, k, lbn, "its SHA-256 does not match its fingerprint");
        }
        return block;
    }

    private CorruptDataException corrupt(BlockBatch batch, int k, long lbn, String why) {
        return new CorruptDataException(store.keepsBlocksOnWorkers() ? "range-data" : "data-log", store.where(),
                "pbn " + batch.pbn(k) + " (" + snapshot.id() + " LBN " + lbn + ")", why);
    }

    /** The byte range being written and where it stands: every block and zero run is cut to it. */
    private static final class Range {
        final long first;
        final long end; // exclusive
        final int blockSize;
        final OutputStream out;
        final byte[] block;
        final byte[] digest = new byte[Fingerprint.BYTES];
        final BlockHasher hasher = new BlockHasher();
        long nextLbn;

        Range(long first, long last, int blockSize, OutputStream out) {
            this.first = first;
            this.end = last + 1;
            this.blockSize = blockSize;
            this.out = out;
            this.block = new byte[blockSize];
            this.nextLbn = first / blockSize;
        }

        /** Writes the zeros of LBNs [nextLbn, lbn). */
        void zerosUpTo(long lbn) throws IOException {
            if (lbn <= nextLbn) {
                return;
            }
            long from = Math.max(first, nextLbn * blockSize);
            long to = Math.min(end, lbn * blockSize);
            for (long at = from; at < to; ) {
                int n = (int) Math.min(ZEROS_BYTES, to - at);
                out.write(ZEROS, 0, n);
                at += n;
            }
            nextLbn = lbn;
        }

        /** Writes the part of verified block {@code lbn} inside the range. */
        void block(byte[] data, long lbn) throws IOException {
            long start = lbn * blockSize;
            long from = Math.max(first, start);
            long to = Math.min(end, start + blockSize);
            if (to > from) {
                out.write(data, (int) (from - start), (int) (to - from));
            }
            nextLbn = lbn + 1;
        }
    }
}
