package org.holdfast.client.scan;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.RandomAccessFile;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.holdfast.client.Images;
import org.holdfast.common.protocol.ProtocolLimits;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Scans a real image twice through the real pipeline and checks the changed LBNs exactly. */
class ChangeDetectorTest {
    static final int BS = 4096;

    @TempDir
    Path dir;

    private List<Long> scan(Path image, long size, StateFile.PreviousState prev, Path stateOut, int chunkBytes) throws Exception {
        long blocks = ProtocolLimits.blockCount(size, BS);
        List<Long> changed = new ArrayList<>();
        try (FileChannel ch = FileChannel.open(image, StandardOpenOption.READ);
             StateFile.Writer w = StateFile.Writer.create(stateOut, BS, size);
             BlockReader r = new BlockReader(ch, size, BS, ChangedBlockList.all(blocks), chunkBytes, 3, 2)) {
            VolumeScanner.Result res = VolumeScanner.scan(r, new ChangeDetector(prev), prev, w, blocks, BS,
                    (lbn, fps, off, data, dOff, zero, tag) -> changed.add(lbn), b -> { });
            assertThat(res.blocksRead()).isEqualTo(blocks);
            w.commit(1, 0);
        }
        return changed;
    }

    @Test
    void detect_modifiedBlocks_reportsExactlyThoseLbns() throws Exception {
        long size = 1000L * BS + 123;
        Path image = Images.create(dir.resolve("a.img"), size, BS, 3, 5);
        Path s1 = dir.resolve("s1.state");
        List<Long> first = scan(image, size, null, s1, 64 * BS);
        assertThat(first).hasSize(1001); // no previous state: everything, zero blocks too

        long[] modified = {1, 2, 63, 64, 65, 500, 999, 1000};
        for (long lbn : modified) {
            Images.overwrite(image, lbn, BS, lbn * 7);
        }
        try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "rw")) {
            f.setLength(size);
        }
        // a block rewritten with its own content is not a change
        byte[] same = new byte[BS];
        try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "rw")) {
            f.seek(300L * BS);
            f.readFully(same);
            f.seek(300L * BS);
            f.write(same);
        }
        try (StateFile.PreviousState prev = StateFile.load(s1).state()) {
            List<Long> second = scan(image, size, prev, dir.resolve("s2.state"), 64 * BS);
            assertThat(second).containsExactly(1L, 2L, 63L, 64L, 65L, 500L, 999L, 1000L);
        }
    }

    @Test
    void detect_blockBecomesZero_reportedAsChangedZero() throws Exception {
        long size = 50L * BS;
        Path image = Images.create(dir.resolve("z.img"), size, BS, 9, 0);
        Path s1 = dir.resolve("s1.state");
        scan(image, size, null, s1, 8 * BS);
        try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "rw")) {
            f.seek(10L * BS);
            f.write(new byte[BS]);
        }
        List<Boolean> zeros = new ArrayList<>();
        try (StateFile.PreviousState prev = StateFile.load(s1).state();
             FileChannel ch = FileChannel.open(image, StandardOpenOption.READ);
             BlockReader r = new BlockReader(ch, size, BS, ChangedBlockList.all(50), 8 * BS, 2, 1)) {
            VolumeScanner.scan(r, new ChangeDetector(prev), prev, null, 50, BS,
                    (lbn, fps, off, data, dOff, zero, tag) -> {
                        assertThat(lbn).isEqualTo(10L);
                        zeros.add(zero);
                    }, b -> { });
        }
        assertThat(zeros).containsExactly(true);
    }
}
