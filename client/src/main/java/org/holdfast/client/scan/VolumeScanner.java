package org.holdfast.client.scan;

import java.util.function.LongConsumer;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;
import org.holdfast.common.id.Fingerprint;

/**
 * One pass over a volume: takes hashed chunks from a {@link BlockReader} in LBN order, lets the
 * {@link ChangeDetector} pick the changed blocks, hands those to a {@link ChangeSink}, and writes
 * every LBN's fingerprint into the next {@link StateFile}. LBNs the reader skipped (outside a
 * changed-blocks list) keep the previous state's fingerprints.
 */
public final class VolumeScanner {
    private VolumeScanner() {
    }

    /**
     * What a scan saw. {@code blocksRead}/{@code bytesRead} count the blocks scanned (holes included);
     * {@code sourceBytesRead} the bytes actually read from the source and {@code holeBytes} the bytes
     * of blocks skipped as holes without reading; {@code sha256Blocks} the blocks whose SHA-256 was
     * computed (the others were zero, holes, or kept their stored SHA-256 by an unchanged cheap hash).
     */
    public record Result(long blocksRead, long bytesRead, long zeroBlocksRead, long changedBlocks, long changedZeroBlocks,
                         long sourceBytesRead, long holeBytes, long sha256Blocks) {
    }

    /**
     * Runs the scan to the end. {@code previous} supplies fingerprints for skipped LBNs (required
     * when the reader skips any); {@code state} may be null (no state kept); {@code progress}
     * receives the bytes of each chunk read.
     */
    public static Result scan(BlockReader reader, ChangeDetector detector, StateFile.PreviousState previous,
                              StateFile.Writer state, long blockCount, int blockSize, ChangeSink sink,
                              LongConsumer progress) throws InterruptedException {
        boolean[] changed = new boolean[0];
        byte[] scratch = new byte[1 << 20];
        long read = 0;
        long zeroRead = 0;
        long changedBlocks = 0;
        long changedZero = 0;
        long sourceBytes = 0;
        long holeBlocks = 0;
        long sha256 = 0;
        for (ScannedChunk c; (c = reader.next()) != null; ) {
            try {
                if (changed.length < c.blocks) {
                    changed = new boolean[c.blocks];
                }
                if (state != null && state.written() < c.firstLbn) {
                    requirePrevious(previous);
                    state.copyFrom(previous, c.firstLbn - state.written(), scratch);
                }
                detector.detect(c.firstLbn, c.blocks, c.fingerprints, changed);
                for (int i = 0; i < c.blocks; i++) {
                    if (c.zero[i]) {
                        zeroRead++;
                    }
                    if (changed[i]) {
                        changedBlocks++;
                        if (c.zero[i]) {
                            changedZero++;
                        }
                        sink.changed(c.firstLbn + i, c.fingerprints, i * Fingerprint.BYTES, c.data, i * blockSize, c.zero[i],
                                c.tags[i]);
                    }
                }
                if (state != null) {
                    state.append(c.fingerprints, 0, c.changeHashes, 0, c.blocks);
                }
                read += c.blocks;
                sourceBytes += c.sourceBytesRead;
                holeBlocks += c.holeBlocks;
                sha256 += c.sha256Blocks;
                sink.chunkDone();
                progress.accept((long) c.blocks * blockSize);
            } finally {
                reader.release(c);
            }
        }
        if (state != null && state.written() < blockCount) {
            requirePrevious(previous);
            state.copyFrom(previous, blockCount - state.written(), scratch);
        }
        return new Result(read, read * blockSize, zeroRead, changedBlocks, changedZero, sourceBytes,
                holeBlocks * blockSize, sha256);
    }

    private static void requirePrevious(StateFile.PreviousState previous) {
        if (previous == null) {
            throw new AgentException(ExitCode.INTERNAL, "blocks were skipped without a previous state to keep", null);
        }
    }
}
