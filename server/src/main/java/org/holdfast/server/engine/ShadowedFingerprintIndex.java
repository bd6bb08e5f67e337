package org.holdfast.server.engine;

import java.util.concurrent.atomic.LongAdder;

/**
 * Shadow mode: runs an exact index beside the engine in use, on the same stream, and counts how
 * many of the duplicates the exact index finds the engine finds too (dedup efficiency, as the
 * design defines it). Only the primary's answers reach the caller; the shadow learns the same
 * outcomes. We own both indexes and close them.
 */
public final class ShadowedFingerprintIndex implements FingerprintIndex {
    private final FingerprintIndex primary;
    private final FingerprintIndex shadow;
    private final LongAdder primaryDuplicates = new LongAdder();
    private final LongAdder shadowDuplicates = new LongAdder();

    /** Answers from {@code primary}; measures it against {@code shadow}. */
    public ShadowedFingerprintIndex(FingerprintIndex primary, FingerprintIndex shadow) {
        this.primary = primary;
        this.shadow = shadow;
    }

    /** The index whose answers are used. */
    public FingerprintIndex primary() {
        return primary;
    }

    /** Duplicates the primary found so far. */
    public long primaryDuplicates() {
        return primaryDuplicates.sum();
    }

    /** Duplicates the shadow (exact) index found so far. */
    public long shadowDuplicates() {
        return shadowDuplicates.sum();
    }

    /** primary duplicates / shadow duplicates; 1 before any duplicate. */
    public double efficiency() {
        long s = shadowDuplicates.sum();
        return s == 0 ? 1.0 : Math.min(1.0, (double) primaryDuplicates.sum() / s);
    }

    @Override
    public DedupStream openStream(String volumeName) {
        DedupStream p = primary.openStream(volumeName);
        DedupStream s = shadow.openStream(volumeName);
        return new DedupStream() {
            private long[] scratch = new long[0];

            @Override
            public void lookup(byte[] fps, int count, long[] pbns) {
                p.lookup(fps, count, pbns);
                if (scratch.length < count) {
                    scratch = new long[count];
                }
                s.lookup(fps, count, scratch);
                long pd = 0;
                long sd = 0;
                for (int i = 0; i < count; i++) {
                    if (pbns[i] != 0) {
                        pd++;
                    }
                    if (scratch[i] != 0) {
                        sd++;
                    }
                }
                primaryDuplicates.add(pd);
                shadowDuplicates.add(sd);
            }

            /** The primary's: only its answers reach the caller, so only its placement stores blocks. */
            @Override
            public void storingWorkers(int count, long[] workers) {
                p.storingWorkers(count, workers);
            }

            @Override
            public void record(byte[] fps, int count, long[] pbns, boolean[] isNew) {
                p.record(fps, count, pbns, isNew);
                s.record(fps, count, pbns, isNew);
            }

            /** The storing workers are the primary's (see {@link #storingWorkers}). */
            @Override
            public void record(byte[] fps, int count, long[] pbns, boolean[] isNew, long[] storers) {
                p.record(fps, count, pbns, isNew, storers);
                s.record(fps, count, pbns, isNew);
            }

            @Override
            public void close() {
                try {
                    p.close();
                } finally {
                    s.close();
                }
            }
        };
    }

    @Override
    public void forget(long pbn, byte[] fps, int off) {
        primary.forget(pbn, fps, off);
        shadow.forget(pbn, fps, off);
    }

    @Override
    public void forgetAll(long[] pbns, byte[] fps, int count) {
        primary.forgetAll(pbns, fps, count);
        shadow.forgetAll(pbns, fps, count);
    }

    @Override
    public void flush() {
        primary.flush();
        shadow.flush();
    }

    /** The primary's counters: its busy time leaves the shadow's work out, so the rate is the primary's own. */
    @Override
    public IndexStats stats() {
        return primary.stats();
    }

    @Override
    public void close() {
        try {
            primary.close();
        } finally {
            shadow.close();
        }
    }
}
