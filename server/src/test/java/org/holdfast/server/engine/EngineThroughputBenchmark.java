package org.holdfast.server.engine;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Arrays;
import java.util.Comparator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Engine-alone throughput (no payload I/O): fingerprints per second through lookup + record of one
 * stream, for a mostly duplicate stream (a volume backed up again from another stream) and a
 * mostly new one (fresh content). Runs with -Pslow; prints, never asserts, the figures:
 *
 * <pre>mvn -B -o -pl server test -Pslow -Dtest=EngineThroughputBenchmark</pre>
 *
 * or as a program on the test class path (see docs/benchmarks.md). Each measurement follows a
 * warm-up pass over different data so the JIT has compiled the hot path.
 */
@Tag("slow")
class EngineThroughputBenchmark {
    static final int BATCH = 4096;

    /** Fingerprints of contents {@code first..first+n-1}, packed. */
    static byte[] content(long first, int n) {
        byte[] f = new byte[n * 32];
        for (int i = 0; i < n; i++) {
            BackupStreamGenerator.fingerprint(first + i, f, i);
        }
        return f;
    }

    /** Runs one stream over {@code f}; returns fingerprints/s of lookup + record. */
    static double pass(FingerprintIndex index, byte[] f, long[] nextPbn, String volume) {
        int n = f.length / 32;
        byte[] batch = new byte[BATCH * 32];
        long[] pbns = new long[BATCH];
        boolean[] isNew = new boolean[BATCH];
        long t0 = System.nanoTime();
        try (DedupStream s = index.openStream(volume)) {
            for (int off = 0; off < n; off += BATCH) {
                int c = Math.min(BATCH, n - off);
                System.arraycopy(f, off * 32, batch, 0, c * 32);
                s.lookup(batch, c, pbns);
                for (int i = 0; i < c; i++) {
                    isNew[i] = pbns[i] == 0;
                    if (isNew[i]) {
                        pbns[i] = nextPbn[0]++;
                    }
                }
                s.record(batch, c, pbns, isNew);
            }
        }
        long t = System.nanoTime() - t0;
        return n / (t / 1e9);
    }

    record Figures(double duplicateFps, double newFps, double duplicateShare) {
    }

    static Figures measure(Path dir, SungemSettings settings, int fingerprints) {
        long[] nextPbn = {1};
        try (SungemFingerprintIndex idx = new SungemFingerprintIndex(dir, settings, Clock.systemUTC())) {
            // Warm-up: new then duplicate on other content.
            byte[] warm = content(1L << 40, fingerprints / 2);
            pass(idx, warm, nextPbn, "warm-a");
            pass(idx, warm, nextPbn, "warm-b");
            byte[] fresh = content(1, fingerprints);
            long dupsBefore = idx.stats().hits();
            double newFps = pass(idx, fresh, nextPbn, "new");
            idx.flush();
            double dupFps = pass(idx, fresh, nextPbn, "again");
            long dups = idx.stats().hits() - dupsBefore;
            SungemStats st = idx.sungemStats();
            System.out.printf("  stats: fallback probes %d hits %d, bloom fill %.3f fp %.4f, containers loaded %d,"
                    + " sfi %d entries%n", st.fallbackProbes(), st.fallbackHits(), st.bloomFill(),
                    st.bloomFalsePositiveRate(), st.containersLoaded(), st.sfiEntries());
            return new Figures(dupFps, newFps, (double) dups / fingerprints);
        }
    }

    static void delete(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    static void run(Path base, int fingerprints) throws IOException {
        for (boolean fallback : new boolean[] {false, true}) {
            Path dir = base.resolve("tp-" + fallback);
            delete(dir);
            SungemSettings s = SungemSettings.defaults().withExactFallback(fallback);
            Figures f = measure(dir, s, fingerprints);
            System.out.printf("engine-throughput fallback=%s fingerprints=%d: duplicate stream %.0f fps/s"
                    + " (%.1f %% found), new stream %.0f fps/s%n", fallback, fingerprints, f.duplicateFps(),
                    100 * f.duplicateShare(), f.newFps());
            delete(dir);
        }
    }

    @Test
    void throughput_duplicateAndNewStreams_printed() throws IOException {
        Path base = Files.createTempDirectory("hf-engine-bench");
        run(base, Integer.getInteger("fingerprints", 2_000_000));
        delete(base);
    }

    /** {@code java -cp <test classpath> org.holdfast.server.engine.EngineThroughputBenchmark [fingerprints]}. */
    public static void main(String[] args) throws IOException {
        Path base = Files.createTempDirectory("hf-engine-bench");
        run(base, args.length > 0 ? Integer.parseInt(args[0]) : 2_000_000);
        delete(base);
        System.out.println(Arrays.toString(args));
    }
}
