package org.holdfast.client.daemon;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.holdfast.client.ExitCode;

/**
 * One run of a volume's backup: the pre hook, the backup with its retries, the post hook, and the
 * run log's record, in that order.
 *
 * <p>A failing pre hook skips the backup. The post hook runs at the end of every run that began, whatever
 * happened: after a success, a failed backup, a failed pre hook (it may have half done its work), and,
 * through {@link #abandon()}, when the daemon stops during the run. Only network failures and a worker
 * the server lost are retried ({@link BackupOutcome#retryable()}): anything else would fail the same way again.
 * Each try has its own pre hook and, before the wait for the next try, its own post hook
 * ({@code HOLDFAST_RESULT=retrying}), so what a pre hook holds (a frozen file system) lasts one try, never the waits.
 */
final class BackupRun {
    private final AgentConfig config;
    private final AgentConfig.VolumeConfig volume;
    private final String trigger;
    private final VolumeBackup backup;
    private final HookRunner hooks;
    private final RunLog runLog;
    private final DaemonLog log;
    /** HOLDFAST_RESULT of a post hook run between tries, before the wait for the next one. */
    static final String RETRYING = "retrying";
    private final Instant start = Instant.now().truncatedTo(ChronoUnit.MILLIS);
    /** Set by whichever of the run itself and {@link #abandon()} gets to record it: the post hook runs once. */
    private final AtomicBoolean settled = new AtomicBoolean();
    private volatile int attempt;
    private volatile String lastError;
    /** True from a pre hook's start until the post hook ran after it: the post hook is owed. */
    private volatile boolean postDue;
    /** The summary of the post hook run last (between tries), or null. */
    private volatile String lastPost;
    private java.util.function.Consumer<RunRecord> onFinished = r -> { };

    BackupRun(AgentConfig config, AgentConfig.VolumeConfig volume, String trigger, VolumeBackup backup, HookRunner hooks,
              RunLog runLog, DaemonLog log) {
        this.config = config;
        this.volume = volume;
        this.trigger = trigger;
        this.backup = backup;
        this.hooks = hooks;
        this.runLog = runLog;
        this.log = log;
    }

    /** Also hands the finished run's record to {@code listener} (the server's run reports); returns this. */
    BackupRun onFinished(java.util.function.Consumer<RunRecord> listener) {
        this.onFinished = listener;
        return this;
    }

    /** Runs it; answers the record written to the run log, or null if {@link #abandon()} recorded it first. */
    RunRecord execute() {
        runLog.begin(new RunRecord(volume.name(), trigger, start.toString(), null, "running", 0, null, 0, 0, 0, null, null, null, null));
        log.info("volume " + volume.name() + ": run started (" + trigger + ")");
        String pre = null;
        for (int n = 1; ; n++) {
            if (volume.preHook() != null) {
                postDue = true;
                HookRunner.Outcome o = hooks.run("volume " + volume.name() + " pre hook", volume.preHook(), env("pre", null, null));
                pre = o.summary();
                if (!o.ok()) {
                    // the record's tries count backups: try n never started
                    return finish(RunRecord.FAILED, null, ExitCode.LOCAL_IO.code(), pre, "pre hook failed (" + pre + ")"
                            + (n > 1 ? " before try " + n + "; try " + (n - 1) + " had failed: " + lastError : "; backup skipped"));
                }
            }
            attempt = n; // status shows try 0 during the first pre hook
            BackupOutcome out = tryOnce();
            if (out.ok() || !out.retryable() || attempt >= config.retry().attempts()) {
                String message = out.ok()
                        ? "snapshot " + out.snapshot() + " committed (" + out.mode() + ")" + (attempt > 1 ? " on try " + attempt : "")
                        : "backup failed" + (attempt > 1 ? " after " + attempt + " tries" : "") + ": " + out.error();
                return finish(out.ok() ? RunRecord.SUCCEEDED : RunRecord.FAILED, out, out.exit().code(), pre, message);
            }
            lastError = out.error();
            Duration wait = config.retry().backoff(attempt);
            log.info("volume " + volume.name() + ": try " + attempt + " of " + config.retry().attempts() + " failed "
                    + (out.exit() == ExitCode.TRANSIENT ? "on a worker the server lost (" : "on the network (")
                    + out.error() + "); next try in " + wait.toMillis() + " ms");
            if (volume.preHook() != null) {
                // undo what the pre hook did (a freeze) for the wait; the next try runs the pre hook again
                runPostHook(RETRYING, null);
            }
            try {
                Thread.sleep(wait.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return null; // the daemon is stopping and abandon() records the run
            }
        }
    }

    private BackupOutcome tryOnce() {
        try {
            return backup.backup(config, volume);
        } catch (RuntimeException e) {
            return new BackupOutcome(ExitCode.INTERNAL, null, null, 0, 0, "internal error: " + e, 0);
        }
    }

    /** The daemon is stopping during this run: run the post hook now and record the run as interrupted. */
    void abandon() {
        finish(RunRecord.INTERRUPTED, null, ExitCode.INTERNAL.code(), null, "the daemon stopped during the run");
    }

    /** Try number of the backup now under way (1-based), 0 before the first. */
    int attempt() {
        return attempt;
    }

    /** The error of the last failed try being retried, or null. */
    String lastError() {
        return lastError;
    }

    Instant start() {
        return start;
    }

    String trigger() {
        return trigger;
    }

    private RunRecord finish(String result, BackupOutcome out, int exitCode, String pre, String message) {
        if (!settled.compareAndSet(false, true)) {
            return null;
        }
        String post = lastPost;
        if (volume.postHook() != null && (postDue || volume.preHook() == null)) {
            HookRunner.Outcome o = runPostHook(result, out == null ? null : out.snapshot());
            post = o.summary();
            if (!o.ok()) {
                message = message + "; post hook failed (" + post + ")";
            }
        }
        RunRecord r = new RunRecord(volume.name(), trigger, start.toString(), Instant.now().truncatedTo(ChronoUnit.MILLIS).toString(),
                result, attempt, out == null ? null : out.snapshot(), out == null ? 0 : out.bytesRead(),
                out == null ? 0 : out.bytesSent(), exitCode, pre, post, message, out == null ? 0L : out.sourceBytesRead());
        runLog.append(r);
        log.info("volume " + volume.name() + ": run " + result + ": " + message);
        onFinished.accept(r);
        return r;
    }

    /** Runs the post hook (if any) for the pre hook that ran last; answers its outcome. */
    private HookRunner.Outcome runPostHook(String result, String snapshot) {
        if (volume.postHook() == null) {
            postDue = false;
            return new HookRunner.Outcome(true, null);
        }
        HookRunner.Outcome o = hooks.run("volume " + volume.name() + " post hook", volume.postHook(), env("post", result, snapshot));
        postDue = false;
        lastPost = o.summary();
        if (!o.ok() && RETRYING.equals(result)) {
            log.info("volume " + volume.name() + ": post hook failed before the wait for the next try (" + o.summary() + ")");
        }
        return o;
    }

    private Map<String, String> env(String phase, String result, String snapshot) {
        return hookEnv(volume, phase, result, snapshot);
    }

    /** The variables a hook sees (docs/agent.md, "Hooks"). */
    static Map<String, String> hookEnv(AgentConfig.VolumeConfig volume, String phase, String result, String snapshot) {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("HOLDFAST_VOLUME", volume.name());
        env.put("HOLDFAST_SOURCE", String.valueOf(volume.source()));
        env.put("HOLDFAST_PHASE", phase);
        if (result != null) {
            env.put("HOLDFAST_RESULT", result);
        }
        if (snapshot != null) {
            env.put("HOLDFAST_SNAPSHOT", snapshot);
        }
        return env;
    }
}
