package org.holdfast.client.restore;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RestoreWriterTest {
    static final int BS = 4096;

    @TempDir
    Path dir;

    @Test
    void finish_zeroBlocks_becomeHolesWithExactLength() throws Exception {
        int blocks = 600; // > the 8 MiB write buffer? no: 600 * 4 KiB = 2.4 MiB; holes come from the zero runs
        long size = (long) blocks * BS - 1000; // partial last block
        Path target = dir.resolve("out.img");
        byte[] expected = new byte[(int) size];
        Random rnd = new Random(4);
        byte[] block = new byte[BS];
        try (RestoreWriter w = RestoreWriter.open(target, size, BS, false)) {
            assertThat(w.isFile()).isTrue();
            for (int lbn = 0; lbn < blocks; lbn++) {
                boolean zero = lbn >= 100 && lbn < 500; // 1.6 MiB of zeros in the middle
                if (zero) {
                    w.zero(lbn);
                } else {
                    rnd.nextBytes(block);
                    System.arraycopy(block, 0, expected, lbn * BS, (int) Math.min(BS, size - (long) lbn * BS));
                    w.write(lbn, block, 0);
                }
            }
            assertThat(target).doesNotExist(); // only the temp file so far
            w.finish();
        }
        assertThat(Files.size(target)).isEqualTo(size);
        assertThat(Files.readAllBytes(target)).isEqualTo(expected);
        long allocated = allocatedBytes(target);
        if (allocated >= 0) {
            assertThat(allocated).as("holes: allocated bytes").isLessThan(size - 1024 * 1024);
        }
    }

    @Test
    void finish_allZeroVolume_sparseFileOfFullLength() throws Exception {
        Path target = dir.resolve("zero.img");
        try (RestoreWriter w = RestoreWriter.open(target, 256L * BS, BS, false)) {
            for (int lbn = 0; lbn < 256; lbn++) {
                w.zero(lbn);
            }
            w.finish();
        }
        assertThat(Files.size(target)).isEqualTo(256L * BS);
        byte[] all = Files.readAllBytes(target);
        assertThat(Arrays.mismatch(all, new byte[all.length])).isEqualTo(-1);
    }

    @Test
    void close_withoutFinish_leavesExistingTargetAndNoTempFile() throws Exception {
        Path target = dir.resolve("keep.img");
        Files.writeString(target, "precious");
        try (RestoreWriter w = RestoreWriter.open(target, 10L * BS, BS, true)) {
            w.write(0, new byte[BS], 0);
            w.write(1, new byte[BS], 0);
        }
        assertThat(Files.readString(target)).isEqualTo("precious");
        try (var s = Files.list(dir)) {
            assertThat(s).containsExactly(target);
        }
    }

    @Test
    void finish_overExistingLargerFile_replacesItExactly() throws Exception {
        Path target = dir.resolve("big.img");
        Files.write(target, new byte[100 * BS]);
        try (RestoreWriter w = RestoreWriter.open(target, 2L * BS, BS, true)) {
            byte[] b = new byte[BS];
            Arrays.fill(b, (byte) 7);
            w.write(0, b, 0);
            w.zero(1);
            w.finish();
        }
        assertThat(Files.size(target)).isEqualTo(2L * BS);
        assertThat(Files.readAllBytes(target)[0]).isEqualTo((byte) 7);
    }

    @Test
    void writeRun_directRunsOutOfOrder_landAtTheirOffsets_holesStayHoles_partialLastBlockExact() throws Exception {
        int blocks = 1024; // 4 MiB; runs of 64 blocks, every other one a hole of 1 MiB... written backwards
        long size = (long) blocks * BS - 1234; // the last run ends in a partial block: written buffered
        Path target = dir.resolve("direct.img");
        byte[] expected = new byte[(int) size];
        Random rnd = new Random(11);
        ByteBuffer run = RestoreWriter.runBuffer(64 * BS);
        try (RestoreWriter w = RestoreWriter.open(target, size, BS, false)) {
            boolean direct = w.writesDirect();
            String fs = Files.getFileStore(dir).type();
            if (fs.equals("ext4") || fs.equals("xfs")) {
                assertThat(direct).as("O_DIRECT on " + fs).isTrue();
            }
            for (int first = blocks - 64; first >= 0; first -= 64) {
                if ((first / 64) % 2 == 1 && first != blocks - 64) {
                    continue; // a hole
                }
                byte[] data = new byte[64 * BS];
                rnd.nextBytes(data);
                int len = (int) Math.min(data.length, size - (long) first * BS);
                System.arraycopy(data, 0, expected, first * BS, len);
                run.clear().put(data).flip();
                w.writeRun(first, run);
            }
            assertThat(w.writesDirect()).as("O_DIRECT stays on for aligned runs").isEqualTo(direct);
            w.finish();
        }
        assertThat(Files.size(target)).isEqualTo(size);
        assertThat(Arrays.mismatch(Files.readAllBytes(target), expected)).isEqualTo(-1);
        long allocated = allocatedBytes(target);
        if (allocated >= 0) {
            assertThat(allocated).as("holes: allocated bytes").isLessThan(size * 3 / 4); // 9 of 16 runs written
        }
    }

    @Test
    void writeRun_misalignedBuffer_fallsBackToBufferedAndWritesExactly() throws Exception {
        Path target = dir.resolve("misaligned.img");
        long size = 8L * BS;
        byte[] data = new byte[4 * BS];
        new Random(3).nextBytes(data);
        // one byte past an aligned address: O_DIRECT refuses it, the page cache takes it
        ByteBuffer odd = RestoreWriter.runBuffer(4 * BS + 4096).position(1).slice();
        odd.put(data).flip();
        try (RestoreWriter w = RestoreWriter.open(target, size, BS, false)) {
            w.writeRun(4, odd);
            assertThat(w.writesDirect()).isFalse();
            ByteBuffer heap = ByteBuffer.wrap(data);
            w.writeRun(0, heap);
            w.finish();
        }
        byte[] all = Files.readAllBytes(target);
        assertThat(Arrays.equals(all, 0, 4 * BS, data, 0, data.length)).isTrue();
        assertThat(Arrays.equals(all, 4 * BS, 8 * BS, data, 0, data.length)).isTrue();
    }

    /** st_blocks * 512 via stat(1), or -1 if unavailable. */
    private static long allocatedBytes(Path p) {
        try {
            Process proc = new ProcessBuilder("stat", "-c", "%b %B", p.toString()).redirectErrorStream(true).start();
            String[] out = new String(proc.getInputStream().readAllBytes()).strip().split(" ");
            return proc.waitFor() == 0 ? Long.parseLong(out[0]) * Long.parseLong(out[1]) : -1;
        } catch (Exception e) {
            return -1;
        }
    }
}
