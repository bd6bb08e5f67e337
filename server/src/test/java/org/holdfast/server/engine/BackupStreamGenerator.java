package org.holdfast.server.engine;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A deterministic multi-volume, multi-day incremental backup stream for the dedup engines, shaped
 * after the thesis' workgroup trace (6.1.1): every volume starts from a shared OS-like base image
 * plus its own data (a full backup on day 0), then changes by about {@code dailyChange} of its
 * blocks per day: overwrites with new content, an OS update applied identically to the base region
 * of every volume, regions shifted to other LBNs (their content is old, at new addresses) and
 * appends at the end of the volume. Each day's backup of a volume is its changed blocks, in runs of
 * consecutive LBNs of at most {@code batch} entries. Blocks are content ids; {@link #fingerprint}
 * turns an id into 32 uniform bytes.
 */
final class BackupStreamGenerator {

    /** Shape of the stream. */
    record Params(int volumes, int blocksPerVolume, double baseShare, int days, double dailyChange, int batch,
            long seed) {
        static Params small() {
            return new Params(6, 40_000, 0.7, 6, 0.015, 2048, 42);
        }

        Params scaled(int factor) {
            return new Params(volumes, blocksPerVolume * factor, baseShare, days, dailyChange, batch, seed);
        }
    }

    /** Receives one run of consecutive LBNs of one volume's backup. */
    interface Sink {
        void beginBackup(int volume, int day);

        void run(long[] contentIds, int count);

        void endBackup(int volume, int day);

        void endDay(int day);
    }

    private final Params p;

    BackupStreamGenerator(Params p) {
        this.p = p;
    }

    Params params() {
        return p;
    }

    /** Writes the fingerprint of content {@code id} as entry {@code i} of {@code out}. */
    static void fingerprint(long id, byte[] out, int i) {
        for (int w = 0; w < 4; w++) {
            FingerprintWords.put(out, i, w, mix(id * 4 + w + 0x5DEECE66DL));
        }
    }

    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    /** Generates the whole stream into {@code sink}; returns the number of distinct contents created. */
    long generate(Sink sink) {
        SplittableRandom rnd = new SplittableRandom(p.seed());
        long[] next = {1};
        int baseBlocks = (int) (p.blocksPerVolume() * p.baseShare());
        long[] base = fresh(next, baseBlocks);
        long[][] vol = new long[p.volumes()][];
        int[] size = new int[p.volumes()];
        long[] buf = new long[p.batch()];
        for (int v = 0; v < p.volumes(); v++) {
            vol[v] = new long[p.blocksPerVolume() * 2];
            System.arraycopy(base, 0, vol[v], 0, baseBlocks);
            long[] own = fresh(next, p.blocksPerVolume() - baseBlocks);
            System.arraycopy(own, 0, vol[v], baseBlocks, own.length);
            size[v] = p.blocksPerVolume();
            sink.beginBackup(v, 0);
            emit(vol[v], 0, size[v], buf, sink);
            sink.endBackup(v, 0);
        }
        sink.endDay(0);
        for (int day = 1; day < p.days(); day++) {
            // The OS update: the same extents of the base region get the same new content everywhere.
            List<int[]> osExtents = extents(rnd, baseBlocks, (int) (p.blocksPerVolume() * p.dailyChange() * 0.2));
            List<long[]> osContent = new ArrayList<>();
            for (int[] e : osExtents) {
                osContent.add(fresh(next, e[1]));
            }
            for (int v = 0; v < p.volumes(); v++) {
                boolean[] changed = new boolean[vol[v].length];
                int budget = (int) (p.blocksPerVolume() * p.dailyChange());
                for (int x = 0; x < osExtents.size(); x++) {
                    int[] e = osExtents.get(x);
                    System.arraycopy(osContent.get(x), 0, vol[v], e[0], e[1]);
                    Arrays.fill(changed, e[0], e[0] + e[1], true);
                }
                // Overwrites with new content: half of the change.
                for (int[] e : extents(rnd, size[v], budget / 2)) {
                    System.arraycopy(fresh(next, e[1]), 0, vol[v], e[0], e[1]);
                    Arrays.fill(changed, e[0], e[0] + e[1], true);
                }
                // Shifted regions: old content moved to other LBNs.
                int shifted = 0;
                while (shifted < budget / 5) {
                    int len = 8 + rnd.nextInt(248);
                    int from = rnd.nextInt(Math.max(1, size[v] - len));
                    int to = rnd.nextInt(Math.max(1, size[v] - len));
                    System.arraycopy(vol[v], from, vol[v], to, len);
                    Arrays.fill(changed, to, to + len, true);
                    shifted += len;
                }
                // Appends: a little new data at the end (log-like files).
                int grow = Math.min(budget / 10, vol[v].length - size[v]);
                if (grow > 0) {
                    System.arraycopy(fresh(next, grow), 0, vol[v], size[v], grow);
                    Arrays.fill(changed, size[v], size[v] + grow, true);
                    size[v] += grow;
                }
                sink.beginBackup(v, day);
                int i = 0;
                while (i < size[v]) {
                    if (!changed[i]) {
                        i++;
                        continue;
                    }
                    int j = i;
                    while (j < size[v] && changed[j]) {
                        j++;
                    }
                    emit(vol[v], i, j, buf, sink);
                    i = j;
                }
                sink.endBackup(v, day);
            }
            sink.endDay(day);
        }
        return next[0] - 1;
    }

    private void emit(long[] content, int from, int to, long[] buf, Sink sink) {
        for (int i = from; i < to; i += buf.length) {
            int n = Math.min(buf.length, to - i);
            System.arraycopy(content, i, buf, 0, n);
            sink.run(buf, n);
        }
    }

    private static long[] fresh(long[] next, int n) {
        long[] a = new long[n];
        for (int i = 0; i < n; i++) {
            a[i] = next[0]++;
        }
        return a;
    }

    /** Random extents (start, length) within {@code [0, limit)} covering about {@code budget} blocks. */
    private static List<int[]> extents(SplittableRandom rnd, int limit, int budget) {
        List<int[]> out = new ArrayList<>();
        int covered = 0;
        while (covered < budget) {
            int len = 1 + (int) Math.min(255, -Math.log(1 - rnd.nextDouble()) * 24);
            int start = rnd.nextInt(Math.max(1, limit - len));
            out.add(new int[] {start, len});
            covered += len;
        }
        return out;
    }
}
