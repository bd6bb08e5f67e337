package org.holdfast.server.jobs;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A job context whose cancel is requested from the check after the first {@code allowed} ones on;
 * counts the checks, keeps the log lines, ignores progress.
 */
public final class CancelAfterChecks implements JobContext {
    private final AtomicInteger checks = new AtomicInteger();
    private final List<String> lines = Collections.synchronizedList(new ArrayList<>());
    private final int allowed;

    /** Cancelled at the check after {@code allowed} safe points (0: at the first). */
    public CancelAfterChecks(int allowed) {
        this.allowed = allowed;
    }

    /** Never cancelled; still counts its checks. */
    public static CancelAfterChecks never() {
        return new CancelAfterChecks(Integer.MAX_VALUE);
    }

    /** How often the job asked whether it is cancelled. */
    public int checks() {
        return checks.get();
    }

    @Override
    public void total(long items, long bytes) {
    }

    @Override
    public void advance(long items, long bytes) {
    }

    /** The job's log lines so far. */
    public List<String> lines() {
        return List.copyOf(lines);
    }

    @Override
    public void log(String line) {
        lines.add(line);
    }

    @Override
    public boolean cancelRequested() {
        return checks.incrementAndGet() > allowed;
    }
}
