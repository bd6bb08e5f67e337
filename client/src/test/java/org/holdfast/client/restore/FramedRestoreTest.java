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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * RESTORE_DATA with compressed frames (protocol 4): members in any order, referred to again later in
 * the message, frames spanning pieces; a bit-flipped frame or a member whose fingerprint is wrong
 * fails the restore naming the block and writes nothing wrong.
 */
class FramedRestoreTest {
    static final int BS = 4096;
    static final int PER_MESSAGE = 200;
    static final int FRAME = 16;

    @TempDir
    Path dir;

    /** Text-like blocks, every 7th LBN zero, every 10th a copy of the block 5 before it. */
    private static byte[] volume(int blocks, long seed) {
        byte[] v = new byte[blocks * BS];
        Random rnd = new Random(seed);
        for (int lbn = 0; lbn < blocks; lbn++) {
            int off = lbn * BS;
            if (lbn % 7 == 3) {
                continue;
            }
            if (lbn % 10 == 9) {
                System.arraycopy(v, off - 5 * BS, v, off, BS);
                continue;
            }
            for (int i = 0; i < BS; i++) {
                v[off + i] = (byte) ('a' + rnd.nextInt(10));
            }
            v[off] = (byte) lbn;
        }
        return v;
    }

    /** Where a block's content was already sent in the current message: its frame ordinal and member. */
    private record Sent(byte[] fp, int ordinal, int member) {
    }

    /**
     * The messages a server would send: non-zero blocks in frames of up to {@link #FRAME} (odd frames
     * store their blocks in reverse, so the block carrying the frame is not member 0), a block
     * whose content this message already carried as a FRAME_MEMBER of that frame.
     * {@code flipLbn}: the frame carried with that LBN gets a bit flipped; {@code wrongFpLbn}: that
     * block's fingerprint is altered.
     */
    private static List<RestoreData> messages(byte[] v, int blocks, ByteBufAllocator alloc, long flipLbn, long wrongFpLbn) {
        List<RestoreData> out = new ArrayList<>();
        BlockHasher hasher = new BlockHasher();
        byte[] raw = new byte[FRAME * BS];
        byte[] packed = new byte[BlockCodec.maxCompressedLength(raw.length)];
        try (BlockCodec codec = new BlockCodec()) {
            for (int start = 0; start < blocks; start += PER_MESSAGE) {
                int end = Math.min(blocks, start + PER_MESSAGE);
                RestoreData.Builder b = RestoreData.builder(alloc, start, 1 << 20);
                List<Sent> sent = new ArrayList<>();
                int ordinals = 0;
                int lbn = start;
                while (lbn < end) {
                    byte[] fp = new byte[Fingerprint.BYTES];
                    if (hasher.fingerprint(v, lbn * BS, BS, fp, 0)) {
                        b.addZero();
                        lbn++;
                        continue;
                    }
                    Sent before = find(sent, fp);
                    if (before != null) {
                        b.addFrameMember(alter(fp, lbn == wrongFpLbn), 0, before.member, before.ordinal);
                        lbn++;
                        continue;
                    }
                    // a frame of the next non-zero, not yet sent blocks
                    List<Integer> group = new ArrayList<>();
                    List<byte[]> fps = new ArrayList<>();
                    for (int l = lbn; l < end && group.size() < FRAME; l++) {
                        byte[] f = new byte[Fingerprint.BYTES];
                        if (hasher.fingerprint(v, l * BS, BS, f, 0) || find(sent, f) != null || contains(fps, f)) {
                            break;
                        }
                        group.add(l);
                        fps.add(f);
                    }
                    int m = group.size();
                    boolean reversed = ordinals % 2 == 1;
                    for (int k = 0; k < m; k++) {
                        System.arraycopy(v, group.get(reversed ? m - 1 - k : k) * BS, raw, k * BS, BS);
                    }
                    int n = codec.compress(raw, 0, m * BS, packed, 0);
                    assertThat(n).isPositive();
                    if (group.get(0) == flipLbn) {
                        packed[n / 2] ^= 0x10;
                    }
                    int ordinal = -1;
                    for (int k = 0; k < m; k++) {
                        int member = reversed ? m - 1 - k : k;
                        byte[] f = alter(fps.get(k), group.get(k) == wrongFpLbn);
                        if (k == 0) {
                            ordinal = b.addFrame(f, 0, member, m, packed, 0, n);
                            ordinals++;
                        } else {
                            b.addFrameMember(f, 0, member, ordinal);
                        }
                        sent.add(new Sent(fps.get(k), ordinal, member));
                    }
                    lbn += m;
                }
                out.add(b.build());
            }
        }
        return out;
    }

    private static byte[] alter(byte[] fp, boolean wrong) {
        byte[] f = fp.clone();
        if (wrong) {
            f[7] ^= 1;
        }
        return f;
    }

    private static Sent find(List<Sent> sent, byte[] fp) {
        return sent.stream().filter(s -> Arrays.equals(s.fp, fp)).findFirst().orElse(null);
    }

    private static boolean contains(List<byte[]> fps, byte[] fp) {
        return fps.stream().anyMatch(f -> Arrays.equals(f, fp));
    }

    @ParameterizedTest
    @ValueSource(strings = {"pooled-direct", "heap"})
    void frames_membersInAnyOrderAndReferredAgain_restoreByteIdentical(String kind) throws Exception {
        int blocks = 1000;
        byte[] v = volume(blocks, 3);
        ByteBufAllocator alloc = kind.equals("heap") ? new UnpooledByteBufAllocator(false) : PooledByteBufAllocator.DEFAULT;
        List<RestoreData> messages = messages(v, blocks, alloc, -1, -1);
        assertThat(messages.get(0).frameBlocks().length).as("frames per message").isGreaterThan(5);
        assertThat(messages.get(0).payloadBytes()).as("frames compress").isLessThan(PER_MESSAGE * BS / 2);
        Path target = dir.resolve("out.img");
        try (RestoreWriter w = RestoreWriter.open(target, v.length, BS, false)) {
            RestorePipelineTest.run(w, messages, 3, 10); // pieces of 10 blocks: frames span pieces
            w.finish();
        }
        assertThat(messages).allMatch(m -> m.refCnt() == 0);
        assertThat(Files.readAllBytes(target)).isEqualTo(v);
    }

    @Test
    void frame_bitFlipped_failsNamingABlockOfItAndTargetUntouched() throws Exception {
        int blocks = 600;
        byte[] v = volume(blocks, 4);
        long flip = 400; // carries a frame (LBN 400 starts a message, non-zero, no earlier copy in it)
        List<RestoreData> messages = messages(v, blocks, PooledByteBufAllocator.DEFAULT, flip, -1);
        Path target = dir.resolve("t.img");
        Files.writeString(target, "old");
        try (RestoreWriter w = RestoreWriter.open(target, v.length, BS, true)) {
            assertThatThrownBy(() -> RestorePipelineTest.run(w, messages, 1, 1000))
                    .isInstanceOfSatisfying(BlockMismatchException.class, e -> {
                        assertThat(e.lbn()).isBetween(flip, flip + FRAME + 4);
                        assertThat(e.why()).containsAnyOf("SHA-256", "zstd frame");
                    });
        }
        assertThat(messages).allMatch(m -> m.refCnt() == 0);
        assertThat(Files.readString(target)).isEqualTo("old");
    }

    @Test
    void frameMember_wrongFingerprint_failsNamingThatBlock() throws Exception {
        int blocks = 300;
        byte[] v = volume(blocks, 5);
        long wrong = 205; // a member inside the first frame of the second message
        List<RestoreData> messages = messages(v, blocks, PooledByteBufAllocator.DEFAULT, -1, wrong);
        Path target = dir.resolve("w.img");
        try (RestoreWriter w = RestoreWriter.open(target, v.length, BS, false)) {
            assertThatThrownBy(() -> RestorePipelineTest.run(w, messages, 2, 32))
                    .isInstanceOfSatisfying(BlockMismatchException.class, e -> {
                        assertThat(e.lbn()).isEqualTo(wrong);
                        assertThat(e.why()).contains("SHA-256");
                    });
        }
        assertThat(messages).allMatch(m -> m.refCnt() == 0);
        assertThat(Files.exists(target)).isFalse();
    }
}
