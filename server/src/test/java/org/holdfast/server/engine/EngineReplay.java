package org.holdfast.server.engine;

import java.util.Arrays;

/**
 * Drives a {@link FingerprintIndex} the way the ingest does, without sockets or payloads: for each
 * run, look it up, give every miss a new PBN (as if its block had just been stored durably), record
 * the outcome, flush at the end of each day (the snapshot commits). It keeps the ground truth (the
 * content of every PBN it handed out) and checks every duplicate verdict against it.
 */
final class EngineReplay implements BackupStreamGenerator.Sink {

    /** What one replay measured. */
    record Result(long fingerprints, long duplicatesFound, long falseDuplicates, long stored, long lookupNanos,
            long recordNanos, long[] duplicatesPerDay, long[] fingerprintsPerDay) {
        double efficiencyAgainst(Result exact) {
            return exact.duplicatesFound == 0 ? 1.0 : (double) duplicatesFound / exact.duplicatesFound;
        }
    }

    private final FingerprintIndex index;
    private DedupStream stream;
    private long[] truth = new long[1 << 16];
    private long nextPbn = 1;
    private byte[] fps = new byte[0];
    private long[] pbns = new long[0];
    private boolean[] isNew = new boolean[0];
    private long fingerprints;
    private long duplicates;
    private long falseDuplicates;
    private long lookupNanos;
    private long recordNanos;
    private final long[] dupPerDay;
    private final long[] fpPerDay;
    private int day;
    private Runnable afterDay;

    private EngineReplay(FingerprintIndex index, int days) {
        this.index = index;
        this.dupPerDay = new long[days];
        this.fpPerDay = new long[days];
    }

    /** Replays the generator's whole stream through {@code index}. */
    static Result replay(FingerprintIndex index, BackupStreamGenerator gen) {
        return replay(index, gen, () -> { });
    }

    /** Replays the whole stream, running {@code afterDay} after each day's flush (to advance a clock). */
    static Result replay(FingerprintIndex index, BackupStreamGenerator gen, Runnable afterDay) {
        return run(index, gen, afterDay).result();
    }

    /** As {@link #replay}, keeping the replay for its ground truth ({@link #contentOf}). */
    static EngineReplay run(FingerprintIndex index, BackupStreamGenerator gen, Runnable afterDay) {
        EngineReplay r = new EngineReplay(index, gen.params().days());
        r.afterDay = afterDay;
        gen.generate(r);
        return r;
    }

    /** What the replay measured. */
    Result result() {
        return new Result(fingerprints, duplicates, falseDuplicates, nextPbn - 1, lookupNanos, recordNanos, dupPerDay, fpPerDay);
    }

    /** The content id stored under {@code pbn} (1..stored). */
    long contentOf(long pbn) {
        if (pbn < 1 || pbn >= nextPbn) {
            throw new IllegalArgumentException("PBN " + pbn + " was not handed out");
        }
        return truth[(int) pbn];
    }

    @Override
    public void beginBackup(int volume, int d) {
        day = d;
        stream = index.openStream("volume-" + volume);
    }

    @Override
    public void run(long[] content, int n) {
        if (fps.length < n * 32) {
            fps = new byte[n * 32];
            pbns = new long[n];
            isNew = new boolean[n];
        }
        for (int i = 0; i < n; i++) {
            BackupStreamGenerator.fingerprint(content[i], fps, i);
        }
        long t0 = System.nanoTime();
        stream.lookup(fps, n, pbns);
        long t1 = System.nanoTime();
        lookupNanos += t1 - t0;
        Arrays.fill(isNew, 0, n, false);
        for (int i = 0; i < n; i++) {
            long p = pbns[i];
            if (p != 0) {
                if (p >= nextPbn || truth[(int) p] != content[i]) {
                    falseDuplicates++;
                    p = 0; // the ingest would store it; the test fails on the count anyway
                } else {
                    duplicates++;
                    dupPerDay[day]++;
                }
            }
            if (p == 0) {
                p = nextPbn++;
                if (p >= truth.length) {
                    truth = Arrays.copyOf(truth, truth.length * 2);
                }
                truth[(int) p] = content[i];
                pbns[i] = p;
                isNew[i] = true;
            }
        }
        fingerprints += n;
        fpPerDay[day] += n;
        long t2 = System.nanoTime();
        stream.record(fps, n, pbns, isNew);
        recordNanos += System.nanoTime() - t2;
    }

    @Override
    public void endBackup(int volume, int d) {
        stream.close();
        stream = null;
    }

    @Override
    public void endDay(int d) {
        index.flush();
        afterDay.run();
    }
}
