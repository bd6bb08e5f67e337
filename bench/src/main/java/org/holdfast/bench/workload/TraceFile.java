package org.holdfast.bench.workload;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * One file of a simulated host: where its blocks lie and which generation of content each block
 * holds. Block i's bytes are {@code BlockContent(kind, key(seed, i, generation[i]))}, so two files
 * with the same seed and generations hold the same bytes wherever they lie.
 */
final class TraceFile {
    final TraceFileType type;
    final long seed;
    final int createdDay;
    List<Extent> extents = new ArrayList<>();
    int[] generation;
    /** Bytes in use; below capacity only for append-style files (logs). */
    long length;

    TraceFile(TraceFileType type, long seed, long blocks, int createdDay) {
        this.type = type;
        this.seed = seed;
        this.createdDay = createdDay;
        this.generation = new int[Math.toIntExact(blocks)];
        this.length = blocks * BlockContent.BLOCK;
    }

    int blocks() {
        return generation.length;
    }

    long key(int block) {
        return BlockContent.key(seed, block, generation[block]);
    }

    /** The volume block that holds file block {@code block}. */
    long lbn(int block) {
        long rest = block;
        for (Extent x : extents) {
            if (rest < x.length()) {
                return x.start() + rest;
            }
            rest -= x.length();
        }
        throw new IllegalStateException("file block " + block + " beyond its " + blocks() + " blocks");
    }

    /** Grows the file by {@code more} blocks of generation 0 (extents must be added by the caller). */
    void grow(int more) {
        generation = Arrays.copyOf(generation, generation.length + more);
        length = (long) generation.length * BlockContent.BLOCK;
    }

    /** Writes blocks {@code [from, to)} into the image; the last block only up to {@code length}. */
    void write(VolumeImage image, int from, int to) throws java.io.IOException {
        for (int b = from; b < to; b++) {
            long end = Math.min(length - (long) b * BlockContent.BLOCK, BlockContent.BLOCK);
            if (end <= 0) {
                break;
            }
            image.writeBlock(lbn(b), type.kind, key(b), (int) end);
        }
    }
}
