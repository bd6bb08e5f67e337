package org.holdfast.client.progress;

import java.io.PrintStream;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Progress of a long transfer, redrawn on one line of stderr at most five times a second: bytes
 * done of the total, MB/s, ETA. Silent unless enabled (the CLI enables it when the agent runs on a
 * terminal and not with --json). Thread-safe.
 */
public final class ProgressMeter {
    private static final long REDRAW_NANOS = 200_000_000L;

    private final PrintStream out;
    private final boolean enabled;
    private final String label;
    private final AtomicLong done = new AtomicLong();
    private volatile long total;
    private volatile long startNanos = System.nanoTime();
    private volatile long lastDraw;
    private volatile boolean drawn;

    public ProgressMeter(PrintStream out, boolean enabled, String label) {
        this.out = out;
        this.enabled = enabled;
        this.label = label;
    }

    /** A meter that never prints. */
    public static ProgressMeter silent() {
        return new ProgressMeter(System.err, false, "");
    }

    /** Starts timing a transfer of {@code totalBytes}. */
    public void start(long totalBytes) {
        total = totalBytes;
        done.set(0);
        startNanos = System.nanoTime();
    }

    /** Adds {@code bytes} done; redraws if it is time. */
    public void advance(long bytes) {
        long d = done.addAndGet(bytes);
        if (!enabled) {
            return;
        }
        long now = System.nanoTime();
        if (now - lastDraw >= REDRAW_NANOS) {
            lastDraw = now;
            draw(d, now);
        }
    }

    public long done() {
        return done.get();
    }

    private synchronized void draw(long d, long now) {
        double secs = Math.max(1e-9, (now - startNanos) / 1e9);
        double rate = d / secs;
        String eta = rate > 0 && total > d ? Durations.format((long) ((total - d) / rate)) : "--";
        int pct = total > 0 ? (int) Math.min(100, d * 100 / total) : 100;
        out.print(String.format(Locale.ROOT, "\r%s %3d%%  %s / %s  %.1f MB/s  ETA %s   ", label, pct, Sizes.format(d),
                Sizes.format(total), rate / 1e6, eta));
        out.flush();
        drawn = true;
    }

    /** Clears the progress line. */
    public void finish() {
        if (enabled && drawn) {
            synchronized (this) {
                out.print("\r" + " ".repeat(78) + "\r");
                out.flush();
            }
        }
    }
}
