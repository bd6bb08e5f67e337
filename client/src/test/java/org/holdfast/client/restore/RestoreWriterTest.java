package org.holdfast.client.restore;

import static org.assertj.core.api.Assertions.assertThat;

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
