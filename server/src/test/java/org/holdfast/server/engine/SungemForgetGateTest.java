package org.holdfast.server.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link SungemFingerprintIndex#forgetIfHeld}, the gate for stale marks of another worker's range: a
 * fingerprint the engine's memory says it cannot hold costs no stale.log record and no mark; one it
 * holds is forgotten as by {@code forget} and never answered again; and what "cannot hold" misses
 * (held, older than the Bloom window, not an SFI sample) is shown, which is why only PBNs the engine
 * should never have recorded go through it.
 */
class SungemForgetGateTest {
    private static final int N = 600;

    @TempDir
    Path dir;
    private final SteppingClock clock = new SteppingClock(Instant.parse("2026-11-01T00:00:00Z"));
    private SungemFingerprintIndex index;

    @BeforeEach
    void open() {
        index = new SungemFingerprintIndex(dir, SungemFingerprintIndexTest.smallSettings(), clock);
    }

    @AfterEach
    void close() {
        index.close();
    }

    private static byte[] fps(long seed, int n) {
        byte[] b = new byte[n * 32];
        new Random(seed).nextBytes(b);
        return b;
    }

    private void record(byte[] f, long firstPbn) {
        try (DedupStream s = index.openStream("v")) {
            s.lookup(f, N, new long[N]);
            s.record(f, N, SungemFingerprintIndexTest.seq(firstPbn, N), SungemFingerprintIndexTest.trues(N));
        }
        index.flush();
    }

    private long[] lookUp(byte[] f) {
        long[] found = new long[N];
        try (DedupStream s = index.openStream("l")) {
            s.lookup(f, N, found);
        }
        return found;
    }

    private long staleLogBytes() throws Exception {
        return Files.size(dir.resolve("sungem").resolve("stale.log"));
    }

    @Test
    void notHeld_skipped_noStaleLogRecordNoMark_counted() throws Exception {
        record(fps(1, N), 1);
        long logBefore = staleLogBytes();

        int skipped = index.forgetIfHeld(SungemFingerprintIndexTest.seq(1L << 48, N), fps(2, N), N); // never recorded here

        assertThat(skipped).isEqualTo(N);
        assertThat(staleLogBytes()).as("no stale.log record").isEqualTo(logBefore);
        assertThat(index.sungemStats().staleMarks()).as("no mark in memory").isZero();
        assertThat(index.sungemStats().forgetsNotHeld()).isEqualTo(N);
        assertThat(index.stats().forgotten()).isZero();
        assertThat(lookUp(fps(1, N))).as("what it holds still answers").containsExactly(SungemFingerprintIndexTest.seq(1, N));
    }

    @Test
    void held_markedAsByForget_neverAnsweredAgain_theUnheldOfTheSameBatchSkipped() throws Exception {
        byte[] held = fps(3, N);
        record(held, 1);
        long logBefore = staleLogBytes();
        byte[] batch = Arrays.copyOf(held, 2 * N * 32); // the held ones, then as many it never saw
        System.arraycopy(fps(4, N), 0, batch, N * 32, N * 32);
        long[] pbns = Arrays.copyOf(SungemFingerprintIndexTest.seq(1, N), 2 * N);
        System.arraycopy(SungemFingerprintIndexTest.seq(1L << 48, N), 0, pbns, N, N);

        assertThat(index.forgetIfHeld(pbns, batch, 2 * N)).isEqualTo(N);

        assertThat(index.sungemStats().staleMarks()).as("exactly the held ones marked").isEqualTo(N);
        assertThat(staleLogBytes() - logBefore).isEqualTo(20L * N);
        assertThat(lookUp(held)).as("no freed PBN answered").containsOnly(0L);
    }

    @Test
    void heldButOlderThanTheBloomWindow_onlyItsSfiSamplesMarked_theRestStillAnswered() {
        byte[] old = fps(5, N);
        record(old, 1);
        clock.advance(Duration.ofDays(4)); // smallSettings keep 3 daily filters: every one of them is gone
        lookUp(fps(6, N)); // a lookup advances the chain

        int skipped = index.forgetIfHeld(SungemFingerprintIndexTest.seq(1, N), old, N);

        assertThat(skipped).as("the SFI's samples still say maybe").isLessThan(N);
        assertThat(skipped).as("the other held fingerprints are missed by the gate").isPositive();
        long[] after = lookUp(old);
        long answered = Arrays.stream(after).filter(p -> p != 0).count();
        assertThat(answered).as("held but skipped: still answered (dedup missed later, the owner refuses the freed PBN)")
                .isPositive().isLessThanOrEqualTo(skipped);
    }
}
