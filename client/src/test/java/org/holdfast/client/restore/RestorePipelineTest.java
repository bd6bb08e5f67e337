package org.holdfast.client.restore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.holdfast.common.compress.BlockCodec;
import org.holdfast.common.hash.BlockHasher;
import org.holdfast.common.id.Fingerprint;
import org.holdfast.common.protocol.PayloadCodec;
import org.holdfast.common.protocol.RestoreData;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RestorePipelineTest {
    static final int BS = 4096;

    @TempDir
    Path dir;

    /** A volume of {@code blocks} blocks (last one partial by {@code tail} bytes): random, compressible and zero runs. */
    private static byte[] volume(int blocks, int tail, long seed) {
        byte[] v = new byte[blocks * BS - tail];
        Random rnd = new Random(seed);
        for (int lbn = 0; lbn < blocks; lbn++) {
            int kind = rnd.nextInt(4); // 0 zero, 1 random (raw), 2-3 compressible (zstd)
            if (lbn % 97 < 30) {
                kind = 0; // long zero runs
            }
            int off = lbn * BS;
            int len = Math.min(BS, v.length - off);
            if (kind == 1) {
                byte[] b = new byte[len];
                rnd.nextBytes(b);
                System.arraycopy(b, 0, v, off, len);
            } else if (kind >= 2) {
                for (int i = 0; i < len; i++) {
                    v[off + i] = (byte) ("holdfast " + lbn).charAt(i % 12 % ("holdfast " + lbn).length());
                }
            }
        }
        return v;
    }

    /** The frames a server would send for {@code v}: zero blocks as codec 0, others zstd or raw with their SHA-256. */
    private static List<RestoreData> frames(byte[] v, int blocks, int perFrame, ByteBufAllocator alloc, long corruptLbn) {
        List<RestoreData> out = new ArrayList<>();
        BlockHasher hasher = new BlockHasher();
        byte[] block = new byte[BS];
        byte[] packed = new byte[BlockCodec.maxCompressedLength(BS)];
        byte[] fp = new byte[Fingerprint.BYTES];
        try (BlockCodec codec = new BlockCodec()) {
            for (int start = 0; start < blocks; start += perFrame) {
                RestoreData.Builder b = RestoreData.builder(alloc, start, 1 << 20);
                for (int lbn = start; lbn < Math.min(blocks, start + perFrame); lbn++) {
                    Arrays.fill(block, (byte) 0);
                    System.arraycopy(v, lbn * BS, block, 0, Math.min(BS, v.length - lbn * BS));
                    if (hasher.fingerprint(block, 0, BS, fp, 0)) {
                        b.addZero();
                        continue;
                    }
                    int n = codec.compress(block, 0, BS, packed, 0);
                    if (lbn == corruptLbn) {
                        fp[5] ^= 1;
                    }
                    if (n < 0) {
                        b.add(PayloadCodec.RAW, fp, 0, block, 0, BS);
                    } else {
                        b.add(PayloadCodec.ZSTD, fp, 0, packed, 0, n);
                    }
                }
                out.add(b.build());
            }
        }
        return out;
    }

    static void run(RestoreWriter w, List<RestoreData> frames, int threads, int pieceBlocks) {
        try (RestorePipeline p = new RestorePipeline(w, BS, threads, pieceBlocks)) {
            int i = 0;
            try {
                for (; i < frames.size(); i++) {
                    p.submit(frames.get(i));
                }
                p.finish();
            } finally {
                for (i++; i < frames.size(); i++) {
                    frames.get(i).release();
                }
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"pooled-direct", "heap"})
    void pipeline_mixedBlocks_restoresByteIdenticalWithHoles(String kind) throws Exception {
        int blocks = 2000;
        byte[] v = volume(blocks, 1000, 7);
        ByteBufAllocator alloc = kind.equals("heap") ? new UnpooledByteBufAllocator(false) : PooledByteBufAllocator.DEFAULT;
        List<RestoreData> frames = frames(v, blocks, 300, alloc, -1);
        Path target = dir.resolve("out.img");
        try (RestoreWriter w = RestoreWriter.open(target, v.length, BS, false)) {
            run(w, frames, 3, 64);
            w.finish();
            assertThat(w.bytesWritten()).isLessThan(v.length); // zero blocks became holes
        }
        assertThat(frames).allMatch(f -> f.refCnt() == 0);
        assertThat(Files.size(target)).isEqualTo(v.length);
        assertThat(Files.readAllBytes(target)).isEqualTo(v);
    }

    @Test
    void pipeline_corruptBlock_mismatchNamesLbnAndTargetUntouched() throws Exception {
        int blocks = 1500;
        byte[] v = volume(blocks, 0, 11);
        long bad = 1234;
        while (isZero(v, (int) bad)) {
            bad++;
        }
        List<RestoreData> frames = frames(v, blocks, 200, PooledByteBufAllocator.DEFAULT, bad);
        Path target = dir.resolve("t.img");
        Files.writeString(target, "old");
        long lbn = bad;
        try (RestoreWriter w = RestoreWriter.open(target, v.length, BS, true)) {
            assertThatThrownBy(() -> run(w, frames, 2, 50))
                    .isInstanceOfSatisfying(BlockMismatchException.class, e -> {
                        assertThat(e.lbn()).isEqualTo(lbn);
                        assertThat(e.why()).contains("SHA-256");
                    });
        }
        assertThat(frames).allMatch(f -> f.refCnt() == 0);
        assertThat(Files.readString(target)).isEqualTo("old");
        try (var s = Files.list(dir)) {
            assertThat(s.map(p -> p.getFileName().toString())).containsExactly("t.img");
        }
    }

    @Test
    void pipeline_zstdPayloadNotABlock_mismatchNamesLbn() throws Exception {
        byte[] fp = new byte[Fingerprint.BYTES];
        RestoreData.Builder b = RestoreData.builder(PooledByteBufAllocator.DEFAULT, 40, 1 << 16);
        b.addZero();
        b.add(PayloadCodec.ZSTD, fp, 0, new byte[] {1, 2, 3, 4, 5, 6, 7, 8}, 0, 8); // not zstd at all
        RestoreData d = b.build();
        try (RestoreWriter w = RestoreWriter.open(dir.resolve("x.img"), 100L * BS, BS, false)) {
            assertThatThrownBy(() -> run(w, List.of(d), 1, 16))
                    .isInstanceOfSatisfying(BlockMismatchException.class, e -> assertThat(e.lbn()).isEqualTo(41));
        }
        assertThat(d.refCnt()).isZero();
    }

    private static boolean isZero(byte[] v, int lbn) {
        for (int i = lbn * BS; i < Math.min(v.length, (lbn + 1) * BS); i++) {
            if (v[i] != 0) {
                return false;
            }
        }
        return true;
    }
}
