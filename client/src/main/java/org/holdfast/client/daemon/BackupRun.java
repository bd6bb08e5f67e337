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
 * <p>A failing pre hook skips the backup. The post hook runs once for every run that began, whatever
 * happened: after a success, a failed backup, a failed pre hook (it may have half done its work), and,
 * through {@link #abandon()}, when the daemon stops during the run. Only network failures and a worker
 * the server lost are retried ({@link BackupOutcome#retryable()}): anything else would fail the same way again.
 */
final class BackupRun {
    private final AgentConfig config;
    private final AgentConfig.VolumeConfig volume;
    private final String trigger;
    private final VolumeBackup backup;
    private final HookRunner hooks;
    private final RunLog runLog;
    private final DaemonLog log;
    private final Instant start = Instant.now().truncatedTo(ChronoUnit.MILLIS);
    /** Set by whichever of the run itself and {@link #abandon()} gets to record it: the post hook runs once. */
    private final AtomicBoolean settled = new AtomicBoolean();
    private volatile int attempt;
    private volatile String lastError;
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
        runLog.begin(new RunRecord(volume.name(), trigger, start.toString(), null, "running", 0, null, 0, 0, 0, null, null, null));
        log.info("volume " + volume.name() + ": run started (" + trigger + ")");
        String pre = null;
        if (volume.preHook() != null) {
            HookRunner.Outcome o = hooks.run("volume " + volume.name() + " pre hook", volume.preHook(), env("pre", null, null));
            pre = o.summary();
            if (!o.ok()) {
                return finish(RunRecord.FAILED, null, ExitCode.LOCAL_IO.code(), pre,
                        "pre hook failed (" + pre + "); backup skipped");
            }
        }
        BackupOutcome out;
        try {
            out = tryWithRetries();
        } catch (RuntimeException e) {
            out = new BackupOutcome(ExitCode.INTERNAL, null, null, 0, 0, "internal error: " + e);
        }
        if (out == null) {
            return null; // interrupted: the daemon is stopping and abandon() records the run
        }
        String message = out.ok()
                ? "snapshot " + out.snapshot() + " committed (" + out.mode() + ")" + (attempt > 1 ? " on try " + attempt : "")
                : "backup failed" + (attempt > 1 ? " after " + attempt + " tries" : "") + ": " + out.error();
        return finish(out.ok() ? RunRecord.SUCCEEDED : RunRecord.FAILED, out, out.exit().code(), pre, message);
    }

    private BackupOutcome tryWithRetries() {
        for (attempt = 1; ; attempt++) {
            BackupOutcome out = backup.backup(config, volume);
            if (out.ok() || !out.retryable() || attempt >= config.retry().attempts()) {
                return out;
            }
            lastError = out.error();
            Duration wait = config.retry().backoff(attempt);
            log.info("volume " + volume.name() + ": try " + attempt + " of " + config.retry().attempts() + " failed " + (out.exit() == ExitCode.TRANSIENT ? "on a worker the server lost (" : "on the network (")
                    + out.error() + "); next try in " + wait.toMillis() + " ms");
            try {
                Thread.sleep(wait.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return null;
            }
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
        String post = null;
        if (volume.postHook() != null) {
            HookRunner.Outcome o = hooks.run("volume " + volume.name() + " post hook", volume.postHook(),
                    env("post", result, out == null ? null : out.snapshot()));
            post = o.summary();
            if (!o.ok()) {
                message = message + "; post hook failed (" + post + ")";
            }
        }
        RunRecord r = new RunRecord(volume.name(), trigger, start.toString(), Instant.now().truncatedTo(ChronoUnit.MILLIS).toString(),
                result, attempt, out == null ? null : out.snapshot(), out == null ? 0 : out.bytesRead(),
                out == null ? 0 : out.bytesSent(), exitCode, pre, post, message);
        runLog.append(r);
        log.info("volume " + volume.name() + ": run " + result + ": " + message);
        onFinished.accept(r);
        return r;
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
