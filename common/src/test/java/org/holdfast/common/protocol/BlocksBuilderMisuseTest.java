package org.holdfast.common.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.Unpooled;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Tries to make a built {@link Blocks} message or a live builder see another builder's blocks
 * through the per-block arrays {@link Blocks.Builder} reuses: builders misused after build or
 * close, builders moved between threads, and many threads building at once.
 */
class BlocksBuilderMisuseTest {
    private static final byte[] PAYLOAD = new byte[4096];
    private static final int FRAMES = 150;

    static {
        new Random(3).nextBytes(PAYLOAD);
    }

    /** What a frame should hold: block i has LBN base + i * 3, codec RAW or ZSTD by parity, a payload of 10 + i bytes at i. */
    private record Expected(long base, int count) {
        Blocks.Builder fill(Blocks.Builder b) {
            for (int i = 0; i < count; i++) {
                b.add(base + i * 3L, i % 2 == 0 ? PayloadCodec.RAW : PayloadCodec.ZSTD, PAYLOAD, i, 10 + i);
            }
            return b;
        }

        /** Plain comparisons (run millions of times); the first difference fails with what differs. */
        void check(Blocks m) {
            if (m.count() != count || m.lbns().length != count) {
                throw new AssertionError("frame " + base + ": " + m.count() + " blocks, expected " + count);
            }
            byte[] d = io.netty.buffer.ByteBufUtil.getBytes(m.data(), 0, m.data().writerIndex()); // one access: leak detection is paranoid
            for (int i = 0; i < count; i++) {
                if (m.lbns()[i] != base + i * 3L || m.codecs()[i] != (byte) (i % 2 == 0 ? PayloadCodec.RAW : PayloadCodec.ZSTD)
                        || m.lengths()[i] != 10 + i || d[m.offsets()[i]] != PAYLOAD[i]
                        || d[m.offsets()[i] + 9 + i] != PAYLOAD[i + 9 + i]) {
                    throw new AssertionError("frame " + base + ", block " + i + ": lbn " + m.lbns()[i] + ", length " + m.lengths()[i]);
                }
            }
            int prefixCount = (d[6] & 0xff) << 24 | (d[7] & 0xff) << 16 | (d[8] & 0xff) << 8 | d[9] & 0xff;
            if (prefixCount != count) {
                throw new AssertionError("frame " + base + ": prefix counts " + prefixCount + " blocks, expected " + count);
            }
        }
    }

    private static Blocks.Builder builder() {
        return Blocks.builder(Unpooled.directBuffer(1 << 16));
    }

    @Test
    void aBuilderMisusedAfterBuildOrClose_neitherChangesNorCopiesTheNextBuildersArrays() {
        Expected e1 = new Expected(1000, 5);
        Blocks.Builder old = e1.fill(builder());
        Blocks first = old.build();
        Expected e2 = new Expected(2000, 9);
        Blocks.Builder next = e2.fill(builder()); // took the arrays old gave back
        assertThatThrownBy(() -> old.add(1, PayloadCodec.RAW, PAYLOAD, 0, 10)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> old.addFrame(1, PAYLOAD, 0, 10)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> old.addFrameMember(1)).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(old::build).isInstanceOf(IllegalStateException.class);
        old.close(); // close after build: must not hand next's arrays to a third builder
        Expected e3 = new Expected(3000, 4);
        Blocks.Builder third = e3.fill(builder());
        Blocks second = next.build();
        Blocks thirdMsg = third.build();
        e1.check(first);
        e2.check(second);
        e3.check(thirdMsg);

        Blocks.Builder closed = new Expected(4000, 6).fill(builder());
        closed.close();
        Expected e5 = new Expected(5000, 7);
        Blocks.Builder after = e5.fill(builder());
        assertThatThrownBy(closed::build).isInstanceOf(IllegalStateException.class);
        closed.close();
        Blocks fifth = after.build();
        e5.check(fifth);
        for (Blocks b : List.of(first, second, thirdMsg, fifth)) {
            b.release();
        }
    }

    @Test
    void buildersMovedBetweenThreads_andManyThreadsAtOnce_keepEveryMessageIntact() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            // made on one thread, built on another: the arrays go to the builder's thread, used by one builder at a time
            Expected ea = new Expected(10, 40);
            Blocks.Builder a = pool.submit(() -> ea.fill(builder())).get();
            Blocks built = a.build();
            Expected eb = new Expected(20, 50);
            Blocks other = pool.submit(() -> eb.fill(builder()).build()).get();
            Expected ec = new Expected(30, 60);
            Blocks mine = ec.fill(builder()).build();
            ea.check(built);
            eb.check(other);
            ec.check(mine);
            built.release();
            other.release();
            mine.release();

            List<Future<Integer>> runs = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                long seed = t;
                runs.add(pool.submit(() -> buildMany(seed)));
            }
            for (Future<Integer> r : runs) {
                assertThat(r.get(60, TimeUnit.SECONDS)).isEqualTo(FRAMES);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /** Builds FRAMES frames (some builders closed unbuilt, some nested), rechecking the last few messages after each build. */
    private static int buildMany(long seed) {
        Random rnd = new Random(seed);
        ArrayDeque<Blocks> held = new ArrayDeque<>();
        ArrayDeque<Expected> expected = new ArrayDeque<>();
        int built = 0;
        for (int f = 0; f < FRAMES; f++) {
            Expected e = new Expected(seed * 1_000_000 + f * 1000L, 1 + rnd.nextInt(100));
            Blocks.Builder b = e.fill(builder());
            if (rnd.nextInt(5) == 0) {
                new Expected(-1, 1 + rnd.nextInt(50)).fill(builder()).close(); // nested, closed unbuilt
            }
            Blocks m = b.build();
            e.check(m);
            held.add(m);
            expected.add(e);
            built++;
            if (held.size() > 4) {
                Blocks old = held.poll();
                expected.poll().check(old);
                old.release();
            }
            var it = expected.iterator();
            for (Blocks h : held) {
                it.next().check(h);
            }
        }
        while (!held.isEmpty()) {
            Blocks old = held.poll();
            expected.poll().check(old);
            old.release();
        }
        return built;
    }
}
