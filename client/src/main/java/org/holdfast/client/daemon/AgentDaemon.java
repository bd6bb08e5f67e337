package org.holdfast.client.daemon;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;
import org.holdfast.client.StateDirectory;

/**
 * The resident agent: runs each configured volume's backups at the times its schedule names, one
 * at a time per volume, records every run in the {@link RunLog}, and answers {@code run-now} and
 * {@code status} on its {@link ControlServer} socket.
 *
 * <p>The schedule is checked by a ticker every {@link #TICK_MS} ms against the wall clock rather than
 * by timers set hours ahead, so a clock step or a suspended machine delays a run instead of losing it
 * (times missed while suspended fire once, not once each). The state directory is locked
 * ({@code daemon.lock}) so that two daemons never share one. Start order: lock, run log, the post
 * hooks of runs a previous daemon did not finish, volume workers, ticker, socket; {@link #close()}
 * undoes it in reverse.
 */
public final class AgentDaemon implements AutoCloseable {
    static final long TICK_MS = 250;

    private final AgentConfig config;
    private final VolumeBackup backup;
    private final RunReports reports;
    private final DaemonLog log;
    private final String version;
    private final HookRunner hooks;
    private final HandoffRunner handoff;
    private final Map<String, VolumeWorker> workers = new LinkedHashMap<>();
    private final CountDownLatch stopped = new CountDownLatch(1);
    private final Instant since = Instant.now().truncatedTo(ChronoUnit.SECONDS);
    private FileChannel lockFile;
    private RunLog runLog;
    private ScheduledExecutorService ticker;
    private ControlServer control;
    private boolean closed;

    public AgentDaemon(AgentConfig config, VolumeBackup backup, DaemonLog log, String version) {
        this(config, backup, RunReporter.NONE, null, log, version);
    }

    /** A daemon that reports each finished run to the server through {@code reporter}. */
    public AgentDaemon(AgentConfig config, VolumeBackup backup, RunReporter reporter, DaemonLog log, String version) {
        this(config, backup, reporter, null, log, version);
    }

    /**
     * A daemon that reports its runs through {@code reporter} and also runs the {@code backup} and
     * {@code restore} commands CLIs hand to it ({@code handoff} runs them; null: it takes none).
     */
    public AgentDaemon(AgentConfig config, VolumeBackup backup, RunReporter reporter, HandoffRunner handoff, DaemonLog log,
            String version) {
        this.config = config;
        this.backup = backup;
        this.reports = new RunReports(config, reporter, log);
        this.handoff = handoff;
        this.log = log;
        this.version = version;
        this.hooks = new HookRunner(log);
    }

    /** Starts everything and returns; the daemon then runs until {@link #close()}. */
    public synchronized void start() {
        Path dir = config.stateDir();
        try {
            StateDirectory.createPrivate(dir);
        } catch (IOException e) {
            throw new AgentException(ExitCode.LOCAL_IO, "cannot create the state directory " + dir + ": " + reason(e),
                    "create it, owned by the daemon's user, or set state-dir in the config", e);
        }
        lock(dir);
        runLog = new RunLog(dir, log::info);
        finishInterruptedRuns();
        for (AgentConfig.VolumeConfig v : config.volumes()) {
            workers.put(v.name(), new VolumeWorker(v, trigger -> new BackupRun(config, v, trigger, backup, hooks, runLog, log)
                    .onFinished(reports::submit), log));
        }
        ZonedDateTime now = ZonedDateTime.now();
        for (VolumeWorker w : workers.values()) {
            w.next = w.volume().schedule().next(now).orElse(null);
            log.info("volume " + w.volume().name() + ": schedule '" + w.volume().schedule() + "', next run " + w.next);
        }
        ticker = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "holdfast-schedule");
            t.setDaemon(true);
            return t;
        });
        ticker.scheduleWithFixedDelay(this::tick, TICK_MS, TICK_MS, TimeUnit.MILLISECONDS);
        control = new ControlServer(config.socket(), this::handle, handoff == null ? null : this::handedOff, log);
        log.info("holdfast-agent daemon " + version + " started: server " + config.server() + ", " + workers.size()
                + " volume(s), state " + dir + ", control socket " + config.socket());
    }

    private void lock(Path dir) {
        Path file = dir.resolve("daemon.lock");
        try {
            lockFile = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.READ);
            FileLock lock;
            try {
                lock = lockFile.tryLock();
            } catch (java.nio.channels.OverlappingFileLockException e) {
                lock = null; // held by this very JVM (another daemon instance in it)
            }
            if (lock == null) {
                String pid = new String(Files.readAllBytes(file), StandardCharsets.UTF_8).strip();
                lockFile.close();
                throw new AgentException(ExitCode.USAGE, "another agent daemon (pid " + pid + ") already uses the state directory " + dir,
                        "stop it first, or give this one its own state-dir");
            }
            lockFile.truncate(0);
            lockFile.write(java.nio.ByteBuffer.wrap((ProcessHandle.current().pid() + "\n").getBytes(StandardCharsets.UTF_8)));
        } catch (IOException e) {
            throw new AgentException(ExitCode.LOCAL_IO, "cannot lock " + file + ": " + reason(e),
                    "the state directory must be writable by the daemon's user", e);
        }
    }

    /** Runs the post hook of every run a previous daemon began and never recorded, and records the run as interrupted. */
    private void finishInterruptedRuns() {
        for (RunRecord begun : runLog.unfinished()) {
            AgentConfig.VolumeConfig v = config.volume(begun.volume());
            String post = null;
            if (v != null && v.postHook() != null) {
                HookRunner.Outcome o = hooks.run("volume " + v.name() + " post hook (after restart)", v.postHook(),
                        BackupRun.hookEnv(v, "post", RunRecord.INTERRUPTED, null));
                post = o.summary();
            }
            RunRecord r = new RunRecord(begun.volume(), begun.trigger(), begun.start(), Instant.now().truncatedTo(ChronoUnit.MILLIS).toString(),
                    RunRecord.INTERRUPTED, begun.attempts(), null, 0, 0, ExitCode.INTERNAL.code(), null, post,
                    "the daemon stopped during this run (found at restart)" + (post == null ? "" : "; post hook " + post), null);
            runLog.append(r);
            reports.submit(r);
            log.info("volume " + begun.volume() + ": run from " + begun.start() + " was interrupted; " + r.message());
        }
    }

    private void tick() {
        try {
            ZonedDateTime now = ZonedDateTime.now();
            for (VolumeWorker w : workers.values()) {
                ZonedDateTime due = w.next;
                if (due != null && !now.isBefore(due)) {
                    w.next = w.volume().schedule().next(now).orElse(null);
                    w.request("schedule");
                }
            }
        } catch (RuntimeException e) {
            log.info("scheduler: " + e); // keep ticking: one bad tick must not end all schedules
        }
    }

    /** Asks for a run of {@code volume} now; the future completes with its record. */
    public CompletableFuture<RunRecord> runNow(String volume) {
        VolumeWorker w = workers.get(volume);
        if (w == null) {
            throw new AgentException(ExitCode.USAGE, "the daemon has no volume '" + volume + "'",
                    "name one of: " + String.join(", ", workers.keySet()));
        }
        return w.request("run-now");
    }

    /** What {@code status} shows: the daemon, and per volume its schedule, next run, run under way and last run. */
    public Map<String, Object> status() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("ok", true);
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("version", version);
        d.put("pid", ProcessHandle.current().pid());
        d.put("since", since.toString());
        d.put("server", config.server());
        d.put("stateDir", config.stateDir().toString());
        m.put("daemon", d);
        List<Map<String, Object>> vols = new ArrayList<>();
        for (VolumeWorker w : workers.values()) {
            Map<String, Object> v = new LinkedHashMap<>();
            v.put("name", w.volume().name());
            v.put("source", String.valueOf(w.volume().source()));
            v.put("schedule", w.volume().schedule().toString());
            ZonedDateTime next = w.next;
            v.put("next", next == null ? null : next.toInstant().toString());
            BackupRun run = w.current();
            if (run != null) {
                Map<String, Object> r = new LinkedHashMap<>();
                r.put("trigger", run.trigger());
                r.put("since", run.start().toString());
                r.put("attempt", run.attempt());
                r.put("lastError", run.lastError());
                v.put("running", r);
            } else {
                v.put("running", null);
            }
            v.put("queued", w.hasQueued());
            v.put("last", runLog.last(w.volume().name()));
            vols.add(v);
        }
        m.put("volumes", vols);
        return m;
    }

    private Map<String, Object> handle(JsonNode request) {
        String command = request.path("command").asText("");
        try {
            switch (command) {
                case "status":
                    return status();
                case "run-now": {
                    CompletableFuture<RunRecord> f = runNow(request.path("volume").asText(""));
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("ok", true);
                    if (request.path("wait").asBoolean(false)) {
                        RunRecord r = f.get();
                        if (r == null) {
                            return ControlServer.error("the daemon stopped before the run ended");
                        }
                        m.put("run", r);
                    } else {
                        m.put("queued", true);
                    }
                    return m;
                }
                default:
                    return ControlServer.error("unknown command '" + command + "' (known: status, run-now)");
            }
        } catch (AgentException e) {
            Map<String, Object> m = ControlServer.error(e.getMessage());
            m.put("hint", e.hint());
            return m;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return ControlServer.error("interrupted");
        } catch (ExecutionException e) {
            return ControlServer.error("the run failed unexpectedly: " + e.getCause());
        }
    }

    /** Runs a command a CLI handed over ({@link HandoffClient}), logging its start and end. */
    private int handedOff(JsonNode request, java.io.PrintStream out, java.io.PrintStream err) {
        List<String> args = new ArrayList<>();
        request.path("args").forEach(a -> args.add(a.asText()));
        String what = args.isEmpty() ? "(nothing)" : args.get(0);
        int v = args.indexOf("--volume");
        String volume = v >= 0 && v + 1 < args.size() ? args.get(v + 1) : "?";
        String token = request.path("token").isTextual() ? request.path("token").asText() : null;
        log.info("handoff: " + what + " of volume " + volume + " from a CLI in " + request.path("cwd").asText("?"));
        long t0 = System.nanoTime();
        int code = handoff.run(args, token, out, err);
        log.info(String.format(java.util.Locale.ROOT, "handoff: %s of volume %s ended with exit code %d after %.2f s",
                what, volume, code, (System.nanoTime() - t0) / 1e9));
        return code;
    }

    /** Blocks until {@link #close()}. */
    public void awaitStop() throws InterruptedException {
        stopped.await();
    }

    /**
     * Stops: no new runs, the socket closed, runs under way abandoned (their post hooks run now, they
     * are recorded as interrupted), the lock released. Idempotent.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (ticker != null) {
            ticker.shutdownNow();
        }
        if (control != null) {
            control.close();
        }
        workers.values().forEach(VolumeWorker::stop);
        reports.close();
        try {
            if (lockFile != null) {
                lockFile.close();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            log.info("holdfast-agent daemon stopped");
            stopped.countDown();
        }
    }

    private static String reason(IOException e) {
        return e instanceof java.nio.file.AccessDeniedException ? "Permission denied" : String.valueOf(e.getMessage());
    }
}
