package org.holdfast.gc;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import org.holdfast.common.id.PbnRange;
import org.holdfast.gc.bookkeeping.GcBookkeeper;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.gc.bosc.BoscSettings;
import org.holdfast.gc.sweep.GraceGuard;
import org.holdfast.gc.sweep.SweepReport;
import org.holdfast.gc.sweep.Sweeper;

/** One GC directory wired like the server does it, with a simulated clock and a recording reclaimer. */
public final class GcHarness implements AutoCloseable {
    public final Path dir;
    public final MutableClock clock;
    public final Set<Long> reclaimed = new HashSet<>();
    private final BoscSettings settings;
    private final Duration grace;
    private final PbnRange range;
    public BoscPipeline pipeline;
    public GcBookkeeper bookkeeper;
    public GraceGuard guard;
    public Sweeper sweeper;

    public GcHarness(Path dir, MutableClock clock, BoscSettings settings, Duration grace) {
        this(dir, clock, settings, grace, PbnRange.STANDALONE);
    }

    /** A GC directory over the PBNs of {@code range} (a worker's). */
    public GcHarness(Path dir, MutableClock clock, BoscSettings settings, Duration grace, PbnRange range) {
        this.range = range;
        this.dir = dir;
        this.clock = clock;
        this.settings = settings;
        this.grace = grace;
        open();
    }

    public GcHarness(Path dir, MutableClock clock) {
        this(dir, clock, BoscSettings.defaults().withCommitIdle(Duration.ofMillis(1)), Duration.ofHours(6));
    }

    private void open() {
        pipeline = BoscPipeline.open(dir, settings, range);
        bookkeeper = new GcBookkeeper(pipeline);
        guard = new GraceGuard(pipeline, clock, grace, Duration.ofMinutes(5));
        sweeper = new Sweeper(pipeline, guard, (pbns, n) -> {
            synchronized (reclaimed) {
                for (int i = 0; i < n; i++) {
                    reclaimed.add(pbns[i]);
                }
            }
        }, 8);
    }

    /** Simulated crash and restart. */
    public void crash() {
        pipeline.abandon();
        open();
    }

    public SweepReport sweep() {
        return sweeper.sweep(clock.millis());
    }

    @Override
    public void close() {
        pipeline.close();
    }
}
