package org.holdfast.client.daemon;

import java.time.ZonedDateTime;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Function;

/**
 * Runs one volume's backups one at a time, on its own thread. A request while a run is under way
 * queues one more run; further requests join that queued run instead of piling up (a schedule
 * faster than the backup runs back to back, never two at once).
 */
final class VolumeWorker {
    private final AgentConfig.VolumeConfig volume;
    private final Function<String, BackupRun> newRun;
    private final DaemonLog log;
    private final ExecutorService thread;
    private CompletableFuture<RunRecord> queued;
    private volatile BackupRun current;
    /** When the schedule fires next (set by the daemon's ticker). */
    volatile ZonedDateTime next;

    VolumeWorker(AgentConfig.VolumeConfig volume, Function<String, BackupRun> newRun, DaemonLog log) {
        this.volume = volume;
        this.newRun = newRun;
        this.log = log;
        this.thread = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "holdfast-volume-" + volume.name());
            t.setDaemon(true);
            return t;
        });
    }

    AgentConfig.VolumeConfig volume() {
        return volume;
    }

    /** Asks for a run; the future completes with its record (or null if the daemon stopped first). */
    synchronized CompletableFuture<RunRecord> request(String trigger) {
        if (queued != null) {
            return queued;
        }
        CompletableFuture<RunRecord> f = new CompletableFuture<>();
        queued = f;
        thread.execute(() -> runQueued(trigger));
        return f;
    }

    /** True while a run waits behind the current one. */
    synchronized boolean hasQueued() {
        return queued != null;
    }

    /** The run under way, or null. */
    BackupRun current() {
        return current;
    }

    private void runQueued(String trigger) {
        CompletableFuture<RunRecord> f;
        synchronized (this) {
            f = queued;
            queued = null;
        }
        BackupRun run = newRun.apply(trigger);
        current = run;
        try {
            f.complete(run.execute());
        } catch (RuntimeException | Error e) {
            // one failing run must not take the volume's thread (or the daemon) with it
            log.info("volume " + volume.name() + ": run failed unexpectedly: " + e);
            f.completeExceptionally(e);
        } finally {
            current = null;
        }
    }

    /** Stops taking runs; a run under way is abandoned (its post hook runs now) and its thread interrupted. */
    void stop() {
        CompletableFuture<RunRecord> q;
        synchronized (this) {
            q = queued;
            queued = null;
        }
        if (q != null) {
            q.complete(null);
        }
        BackupRun run = current;
        if (run != null) {
            run.abandon();
        }
        thread.shutdownNow();
    }
}
