package org.holdfast.client.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The daemon in this JVM with a scripted backup (the port, not the CLI: the server-side
 * AgentDaemonTest runs the real one): hooks, retries, one run at a time, the run log, recovery of
 * a run a previous daemon did not finish, and the control socket.
 */
class AgentDaemonRunsTest {
    private static final AgentConfig.Retry FAST_RETRY = new AgentConfig.Retry(4, Duration.ofMillis(50), Duration.ofMillis(100));
    private static final String NEVER = "0 0 1 1 *";

    @TempDir
    Path dir;
    private AgentDaemon daemon;
    private final ByteArrayOutputStream logBytes = new ByteArrayOutputStream();

    /** Answers each try from a script (then OK), counting tries and the most that ran at once. */
    private static final class ScriptedBackup implements VolumeBackup {
        final Deque<ExitCode> script = new ArrayDeque<>();
        final AtomicInteger tries = new AtomicInteger();
        final AtomicInteger running = new AtomicInteger();
        final AtomicInteger maxRunning = new AtomicInteger();
        volatile long millis;
        /** Looked at as each try starts (what the hooks left), its answers kept in {@link #seen}. */
        volatile java.util.function.Supplier<String> probe;
        final List<String> seen = new java.util.concurrent.CopyOnWriteArrayList<>();

        @Override
        public BackupOutcome backup(AgentConfig config, AgentConfig.VolumeConfig volume) {
            if (probe != null) {
                seen.add(probe.get());
            }
            int n = tries.incrementAndGet();
            maxRunning.accumulateAndGet(running.incrementAndGet(), Math::max);
            try {
                Thread.sleep(millis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                running.decrementAndGet();
            }
            ExitCode e;
            synchronized (script) {
                e = script.isEmpty() ? ExitCode.OK : script.poll();
            }
            return e == ExitCode.OK ? new BackupOutcome(e, volume.name() + "@" + n, "full", 4096, 100, null, 4096)
                    : new BackupOutcome(e, null, null, 0, 0, "scripted " + e, 0);
        }
    }

    private AgentConfig config(String cron, AgentConfig.Hook pre, AgentConfig.Hook post) {
        return new AgentConfig("127.0.0.1:7070", new AgentConfig.Trust(null, null, true), null, dir.resolve("state"), FAST_RETRY,
                List.of(new AgentConfig.VolumeConfig("vol", Path.of("/img/vol"), 0, CronSchedule.parse(cron), pre, post, false)));
    }

    private AgentDaemon start(AgentConfig c, VolumeBackup b) {
        daemon = new AgentDaemon(c, b, new DaemonLog(new PrintStream(logBytes, true, StandardCharsets.UTF_8)), "test");
        daemon.start();
        return daemon;
    }

    private String log() {
        return logBytes.toString(StandardCharsets.UTF_8);
    }

    @AfterEach
    void stop() {
        if (daemon != null) {
            daemon.close();
        }
    }

    private static AgentConfig.Hook hook(String command) {
        return new AgentConfig.Hook(command, Duration.ofSeconds(10));
    }

    @Test
    void runNow_preHookFails_backupSkippedPostHookRanRecordedFailed() throws Exception {
        ScriptedBackup b = new ScriptedBackup();
        Path postRan = dir.resolve("post-ran");
        start(config(NEVER, hook("echo cannot freeze >&2; exit 3"), hook("echo \"$HOLDFAST_RESULT $HOLDFAST_VOLUME\" > " + postRan)), b);
        RunRecord r = daemon.runNow("vol").get(30, TimeUnit.SECONDS);
        assertThat(b.tries).as("backup tries").hasValue(0);
        assertThat(r.result()).isEqualTo(RunRecord.FAILED);
        assertThat(r.preHook()).isEqualTo("exit 3: cannot freeze");
        assertThat(r.message()).isEqualTo("pre hook failed (exit 3: cannot freeze); backup skipped");
        assertThat(r.postHook()).isEqualTo("exit 0");
        assertThat(Files.readString(postRan)).isEqualTo("failed vol\n");
        assertThat(log()).contains("volume vol pre hook: cannot freeze");
    }

    @Test
    void runNow_backupFailsNotOnNetwork_notRetriedPostHookStillRuns() throws Exception {
        ScriptedBackup b = new ScriptedBackup();
        b.script.add(ExitCode.LOCAL_IO);
        Path postRan = dir.resolve("post-ran");
        start(config(NEVER, null, hook("echo $HOLDFAST_RESULT > " + postRan)), b);
        RunRecord r = daemon.runNow("vol").get(30, TimeUnit.SECONDS);
        assertThat(b.tries).hasValue(1);
        assertThat(r.result()).isEqualTo(RunRecord.FAILED);
        assertThat(r.exitCode()).isEqualTo(ExitCode.LOCAL_IO.code());
        assertThat(r.message()).isEqualTo("backup failed: scripted LOCAL_IO");
        assertThat(Files.readString(postRan)).isEqualTo("failed\n");
    }

    @Test
    void runNow_networkFailures_retriedUntilSuccess() throws Exception {
        ScriptedBackup b = new ScriptedBackup();
        b.script.add(ExitCode.NETWORK);
        b.script.add(ExitCode.NETWORK);
        start(config(NEVER, null, null), b);
        RunRecord r = daemon.runNow("vol").get(30, TimeUnit.SECONDS);
        assertThat(r.result()).isEqualTo(RunRecord.SUCCEEDED);
        assertThat(r.attempts()).isEqualTo(3);
        assertThat(r.snapshot()).isEqualTo("vol@3");
        assertThat(r.message()).isEqualTo("snapshot vol@3 committed (full) on try 3");
        assertThat(log()).contains("try 1 of 4 failed on the network (scripted NETWORK); next try in 50 ms")
                .contains("try 2 of 4 failed on the network (scripted NETWORK); next try in 100 ms");
    }

    @Test
    void runNow_retriedWithHooks_postHookBeforeEachWaitPreHookBeforeEachTry() throws Exception {
        ScriptedBackup b = new ScriptedBackup();
        b.script.add(ExitCode.NETWORK);
        b.script.add(ExitCode.TRANSIENT);
        Path calls = dir.resolve("calls");
        b.probe = () -> lastLine(calls);
        start(config(NEVER, hook("echo pre >> " + calls), hook("echo post $HOLDFAST_RESULT >> " + calls)), b);
        RunRecord r = daemon.runNow("vol").get(30, TimeUnit.SECONDS);
        assertThat(r.result()).isEqualTo(RunRecord.SUCCEEDED);
        assertThat(r.attempts()).isEqualTo(3);
        // what the pre hook holds (a freeze) is held during each try and released for every wait
        assertThat(b.seen).containsExactly("pre", "pre", "pre");
        assertThat(Files.readAllLines(calls)).containsExactly("pre", "post retrying", "pre", "post retrying", "pre", "post succeeded");
        assertThat(r.preHook()).isEqualTo("exit 0");
        assertThat(r.postHook()).isEqualTo("exit 0");
    }

    @Test
    void runNow_preHookFailsBeforeARetry_runFailedPostHookRanAfterIt() throws Exception {
        ScriptedBackup b = new ScriptedBackup();
        b.script.add(ExitCode.NETWORK);
        Path calls = dir.resolve("calls");
        // the second pre hook fails: by then it finds its own first call and the post hook's in the file
        start(config(NEVER, hook("echo pre >> " + calls + "; [ $(wc -l < " + calls + ") -lt 3 ] || { echo still busy; exit 4; }"),
                hook("echo post $HOLDFAST_RESULT >> " + calls)), b);
        RunRecord r = daemon.runNow("vol").get(30, TimeUnit.SECONDS);
        assertThat(b.tries).hasValue(1);
        assertThat(r.result()).isEqualTo(RunRecord.FAILED);
        assertThat(r.attempts()).isEqualTo(1);
        assertThat(r.exitCode()).isEqualTo(ExitCode.LOCAL_IO.code());
        assertThat(r.message()).isEqualTo("pre hook failed (exit 4: still busy) before try 2; try 1 had failed: scripted NETWORK");
        assertThat(Files.readAllLines(calls)).containsExactly("pre", "post retrying", "pre", "post failed");
    }

    private static String lastLine(Path file) {
        try {
            List<String> lines = Files.readAllLines(file);
            return lines.isEmpty() ? "" : lines.get(lines.size() - 1);
        } catch (java.io.IOException e) {
            return "none: " + e;
        }
    }

    @Test
    void runNow_workerTheServerLost_retriedLikeANetworkFailure() throws Exception {
        ScriptedBackup b = new ScriptedBackup();
        b.script.add(ExitCode.TRANSIENT);
        start(config(NEVER, null, null), b);
        RunRecord r = daemon.runNow("vol").get(30, TimeUnit.SECONDS);
        assertThat(r.result()).isEqualTo(RunRecord.SUCCEEDED);
        assertThat(r.attempts()).isEqualTo(2);
        assertThat(log()).contains("try 1 of 4 failed on a worker the server lost (scripted TRANSIENT); next try in 50 ms");
    }

    @Test
    void runNow_networkFailuresBeyondAttempts_failedAfterLastTry() throws Exception {
        ScriptedBackup b = new ScriptedBackup();
        for (int i = 0; i < 10; i++) {
            b.script.add(ExitCode.NETWORK);
        }
        start(config(NEVER, null, null), b);
        RunRecord r = daemon.runNow("vol").get(30, TimeUnit.SECONDS);
        assertThat(b.tries).hasValue(4);
        assertThat(r.result()).isEqualTo(RunRecord.FAILED);
        assertThat(r.exitCode()).isEqualTo(3);
        assertThat(r.message()).isEqualTo("backup failed after 4 tries: scripted NETWORK");
    }

    @Test
    void schedule_fasterThanBackup_runsBackToBackNeverTwoAtOnce() throws Exception {
        ScriptedBackup b = new ScriptedBackup();
        b.millis = 700;
        start(config("* * * * * *", null, null), b);
        CompletableFuture<RunRecord> a = daemon.runNow("vol");
        CompletableFuture<RunRecord> again = daemon.runNow("vol");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (b.tries.get() < 4 && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertThat(b.tries.get()).as("runs made").isGreaterThanOrEqualTo(4);
        assertThat(b.maxRunning).as("most runs of one volume at once").hasValue(1);
        assertThat(a.get(10, TimeUnit.SECONDS).result()).isEqualTo(RunRecord.SUCCEEDED);
        assertThat(again.get(10, TimeUnit.SECONDS).result()).isEqualTo(RunRecord.SUCCEEDED);
    }

    @Test
    void preHook_outlivesTimeout_killedAndRecorded() throws Exception {
        ScriptedBackup b = new ScriptedBackup();
        start(config(NEVER, new AgentConfig.Hook("sleep 30", Duration.ofMillis(300)), null), b);
        long t0 = System.nanoTime();
        RunRecord r = daemon.runNow("vol").get(30, TimeUnit.SECONDS);
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(10));
        assertThat(r.preHook()).startsWith("timed out after 300 ms and was killed"); // sh may add "Killed"
        assertThat(b.tries).hasValue(0);
    }

    @Test
    void start_runLeftUnfinishedByEarlierDaemon_postHookRunsAndRunRecordedInterrupted() throws Exception {
        AgentConfig c = config(NEVER, hook("true"), hook("echo $HOLDFAST_RESULT > " + dir.resolve("post-ran")));
        Files.createDirectories(c.stateDir());
        new RunLog(c.stateDir()).begin(new RunRecord("vol", "schedule", "2026-11-25T20:00:00Z", null, "running", 0, null, 0, 0, 0,
                null, null, null, null));
        start(c, new ScriptedBackup());
        assertThat(Files.readString(dir.resolve("post-ran"))).isEqualTo("interrupted\n");
        List<RunRecord> runs = new RunLog(c.stateDir()).readAll();
        assertThat(runs).hasSize(1);
        assertThat(runs.get(0).result()).isEqualTo(RunRecord.INTERRUPTED);
        assertThat(runs.get(0).start()).isEqualTo("2026-11-25T20:00:00Z");
        assertThat(runs.get(0).postHook()).isEqualTo("exit 0");
        assertThat(new RunLog(c.stateDir()).unfinished()).isEmpty();
    }

    @Test
    void controlSocket_mode0600_statusAndRunNowAnswer() throws Exception {
        start(config(NEVER, null, null), new ScriptedBackup());
        Path socket = dir.resolve("state").resolve("agent.sock");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(socket))).isEqualTo("rw-------");
        JsonNode run = ControlClient.call(socket, Map.of("command", "run-now", "volume", "vol", "wait", true));
        assertThat(run.path("run").path("result").asText()).isEqualTo("succeeded");
        JsonNode status = ControlClient.call(socket, Map.of("command", "status"));
        JsonNode vol = status.path("volumes").get(0);
        assertThat(vol.path("name").asText()).isEqualTo("vol");
        assertThat(vol.path("last").path("snapshot").asText()).isEqualTo("vol@1");
        assertThat(vol.path("last").path("bytesRead").asLong()).isEqualTo(4096);
        assertThat(vol.path("next").asText()).endsWith("-01-01T00:00:00Z").as("next run, in UTC on a UTC host");
        JsonNode unknown = ControlClient.call(socket, Map.of("command", "run-now", "volume", "nope"));
        assertThat(unknown.path("ok").asBoolean()).isFalse();
        assertThat(unknown.path("error").asText()).isEqualTo("the daemon has no volume 'nope'");
        assertThat(unknown.path("hint").asText()).isEqualTo("name one of: vol");
    }

    @Test
    void start_secondDaemonOnSameStateDir_refused() {
        start(config(NEVER, null, null), new ScriptedBackup());
        AgentDaemon second = new AgentDaemon(config(NEVER, null, null), new ScriptedBackup(), new DaemonLog(System.out), "test");
        assertThatThrownBy(second::start).isInstanceOf(AgentException.class)
                .hasMessageContaining("another agent daemon (pid " + ProcessHandle.current().pid() + ") already uses the state directory");
    }

    @Test
    void controlClient_noDaemon_saysHowToStartOne() {
        assertThatThrownBy(() -> ControlClient.call(dir.resolve("agent.sock"), Map.of("command", "status")))
                .isInstanceOf(AgentException.class).hasMessageContaining("no agent daemon socket at")
                .extracting(e -> ((AgentException) e).hint()).asString().contains("holdfast-agent daemon --config FILE");
    }
}
