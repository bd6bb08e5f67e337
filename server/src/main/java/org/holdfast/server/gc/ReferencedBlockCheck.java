package org.holdfast.server.gc;

import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import org.holdfast.common.compress.BlockCodec;
import org.holdfast.common.hash.BlockHasher;
import org.holdfast.common.hash.ZeroBlocks;
import org.holdfast.common.id.Fingerprint;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.StoredBlock;

/**
 * The data side of {@link WorkerFsck}: given the referenced PBNs in ascending order, finds each in
 * the range store's location index (missing: data loss), reads it through the store's verifying
 * read (header and CRC32C; a frame member is decoded and hashed there) and decodes and hashes it
 * again against the fingerprint the index holds (a record whose CRC matches bytes that were written
 * wrong, say), so "present" means "restores". The stored PBNs the walk passes between two
 * referenced ones are nobody's: leaks. Progress lines carry the rate and an ETA.
 */
final class ReferencedBlockCheck {
    private final DataStore store;
    private final long total;
    private final long progressNanos;
    private final GcMetadataRebuild.Progress progress;
    private final StoredBlock block = new StoredBlock();
    private final BlockCodec codec = new BlockCodec();
    private final byte[] raw = new byte[FormatVersions.MAX_BLOCK_SIZE];
    private final byte[] digest = new byte[Fingerprint.BYTES];
    private final WorkerFsckReport.Tally missing = new WorkerFsckReport.Tally();
    private final WorkerFsckReport.Tally corrupt = new WorkerFsckReport.Tally();
    private final WorkerFsckReport.Tally leaks = new WorkerFsckReport.Tally();
    private final long started = System.nanoTime();
    private long lastProgress = started;
    private long next; // the lowest stored PBN not walked yet
    private long checked;
    private long blocksRead;
    private long bytesRead;
    private long stored;

    /** Checks {@code total} referenced blocks of {@code store}, a progress line every {@code every}. */
    ReferencedBlockCheck(DataStore store, long total, Duration every, GcMetadataRebuild.Progress progress) {
        this.store = store;
        this.total = total;
        this.progressNanos = every.toNanos();
        this.progress = progress;
    }

    /** Checks referenced {@code pbn} (ascending from call to call). */
    void check(long pbn) {
        boolean[] present = {false};
        store.locations().forEachFrom(next, (p, logId, offset, storedLength, fps, fpOff) -> {
            if (p >= pbn) {
                present[0] = p == pbn;
                return false;
            }
            stored++;
            leaks.add(p);
            return true;
        });
        next = pbn + 1;
        checked++;
        if (!present[0]) {
            missing.add(pbn);
        } else {
            stored++;
            if (!readsBack(pbn)) {
                corrupt.add(pbn);
            }
        }
        long now = System.nanoTime();
        if (now - lastProgress >= progressNanos) {
            lastProgress = now;
            progress.step(rateLine(now));
        }
    }

    /** Walks the stored PBNs after the last referenced one (leaks) and gives the last progress line. */
    void finish() {
        store.locations().forEachFrom(next, (p, logId, offset, storedLength, fps, fpOff) -> {
            stored++;
            leaks.add(p);
            return true;
        });
        progress.step(rateLine(System.nanoTime()) + ", done");
        codec.close();
    }

    private boolean readsBack(long pbn) {
        try {
            store.read(pbn, block);
        } catch (CorruptDataException e) {
            blocksRead++;
            return false;
        }
        blocksRead++;
        bytesRead += block.storedLength();
        int rawLength = block.rawLength();
        if (rawLength <= 0 || rawLength > FormatVersions.MAX_BLOCK_SIZE) {
            return false;
        }
        try {
            codec.decode(block.codec(), block.data(), block.dataOffset(), block.storedLength(), raw, 0, rawLength);
        } catch (RuntimeException e) {
            return false; // does not decode
        }
        BlockHasher.forCurrentThread().sha256(raw, 0, rawLength, digest, 0);
        byte[] fp = block.fingerprint();
        // an all-zero block may carry the zero fingerprint, as the store's own read accepts
        return Arrays.equals(digest, fp) || Arrays.equals(fp, new byte[Fingerprint.BYTES]) && ZeroBlocks.isZero(raw, 0, rawLength);
    }

    private String rateLine(long now) {
        double secs = Math.max(1e-9, (now - started) / 1e9);
        double rate = checked / secs;
        long eta = rate > 0 ? (long) Math.ceil((total - checked) / rate) : 0;
        return String.format(Locale.ROOT, "read %d/%d referenced blocks, %.0f blocks/s, %.1f MiB/s, ETA %d s", checked, total, rate,
                bytesRead / secs / (1 << 20), eta);
    }

    WorkerFsckReport.Finding missing() {
        return missing.finding();
    }

    WorkerFsckReport.Finding corrupt() {
        return corrupt.finding();
    }

    WorkerFsckReport.Finding leaks() {
        return leaks.finding();
    }

    long blocksRead() {
        return blocksRead;
    }

    long bytesRead() {
        return bytesRead;
    }

    long storedBlocks() {
        return stored;
    }
}
