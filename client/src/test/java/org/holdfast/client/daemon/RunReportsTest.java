package org.holdfast.client.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** The daemon's queue of run reports: a report the server did not take waits and goes first once it answers again. */
class RunReportsTest {
    private final AgentConfig config = new AgentConfig("h:7070", new AgentConfig.Trust(null, null, true), null, Path.of("/tmp/x"),
            new AgentConfig.Retry(1, Duration.ZERO, Duration.ZERO), List.of());
    private final ByteArrayOutputStream logBytes = new ByteArrayOutputStream();
    private final DaemonLog log = new DaemonLog(new PrintStream(logBytes, true, StandardCharsets.UTF_8));

    private static RunRecord run(String volume, String result) {
        return new RunRecord(volume, "schedule", "2026-01-01T00:00:00Z", "2026-01-01T00:00:01Z", result, 1, null, 0, 0,
                result.equals(RunRecord.SUCCEEDED) ? 0 : 3, null, null, "m", null);
    }

    private static void awaitTrue(java.util.function.BooleanSupplier c) throws InterruptedException {
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (!c.getAsBoolean() && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(c.getAsBoolean()).isTrue();
    }

    @Test
    void submit_serverDownThenBack_failedRunWaitsAndGoesFirst() throws Exception {
        List<String> sent = new CopyOnWriteArrayList<>();
        AtomicBoolean up = new AtomicBoolean(false);
        try (RunReports reports = new RunReports(config, (c, r) -> {
            if (!up.get()) {
                return "cannot connect to h:7070: Connection refused";
            }
            sent.add(r.volume() + ":" + r.result());
            return null;
        }, log)) {
            reports.submit(run("a", RunRecord.FAILED));
            awaitTrue(() -> logBytes.toString(StandardCharsets.UTF_8).contains("could not report the run"));
            assertThat(reports.pending()).isEqualTo(1);
            up.set(true);
            reports.submit(run("a", RunRecord.SUCCEEDED));
            awaitTrue(() -> sent.size() == 2);
            assertThat(sent).containsExactly("a:failed", "a:succeeded");
            assertThat(reports.pending()).isZero();
        }
    }

    @Test
    void submit_serverNeverAnswers_keepsAtMostTheNewest() throws Exception {
        try (RunReports reports = new RunReports(config, (c, r) -> "down", log)) {
            for (int i = 0; i < RunReports.MAX_PENDING + 7; i++) {
                reports.submit(run("v" + i, RunRecord.FAILED));
            }
            awaitTrue(() -> logBytes.toString(StandardCharsets.UTF_8).contains("dropped from the reports"));
            assertThat(reports.pending()).isEqualTo(RunReports.MAX_PENDING);
        }
    }
}
