package org.holdfast.client.daemon;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs a hook: {@code /bin/sh -c COMMAND} with the volume's variables in its environment, its output
 * copied to the daemon log, killed with its children when it outlives its timeout. A hook succeeds
 * when it exits 0 in time.
 */
final class HookRunner {
    /** Characters of a hook's output kept for the run log. */
    private static final int TAIL = 400;

    private final DaemonLog log;

    HookRunner(DaemonLog log) {
        this.log = log;
    }

    /** The outcome of one hook: whether it succeeded, and a short summary for the run log. */
    record Outcome(boolean ok, String summary) {
    }

    Outcome run(String label, AgentConfig.Hook hook, Map<String, String> env) {
        ProcessBuilder pb = new ProcessBuilder("/bin/sh", "-c", hook.command()).redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        pb.environment().putAll(env);
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            return new Outcome(false, "could not start /bin/sh: " + e.getMessage());
        }
        StringBuilder tail = new StringBuilder();
        Thread reader = new Thread(() -> copy(label, p.getInputStream(), tail), "hook-output");
        reader.setDaemon(true);
        reader.start();
        try {
            if (!p.waitFor(hook.timeout().toMillis(), TimeUnit.MILLISECONDS)) {
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.destroyForcibly();
                p.waitFor(10, TimeUnit.SECONDS);
                reader.join(1000);
                return new Outcome(false, "timed out after " + seconds(hook) + " and was killed" + tail(tail));
            }
            reader.join(1000);
        } catch (InterruptedException e) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            return new Outcome(false, "interrupted (the daemon is stopping)");
        }
        int exit = p.exitValue();
        return new Outcome(exit == 0, "exit " + exit + (exit == 0 ? "" : tail(tail)));
    }

    private static String seconds(AgentConfig.Hook hook) {
        long ms = hook.timeout().toMillis();
        return ms % 1000 == 0 ? ms / 1000 + " s" : ms + " ms";
    }

    private static String tail(StringBuilder tail) {
        synchronized (tail) {
            String s = tail.toString().strip();
            return s.isEmpty() ? "" : ": " + s.replace('\n', ' ');
        }
    }

    private void copy(String label, InputStream in, StringBuilder tail) {
        try (var r = new java.io.BufferedReader(new java.io.InputStreamReader(in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                log.info(label + ": " + line);
                synchronized (tail) {
                    tail.append(line).append('\n');
                    if (tail.length() > TAIL) {
                        tail.delete(0, tail.length() - TAIL);
                    }
                }
            }
        } catch (IOException e) {
            // the process is gone; what was read is kept
        }
    }
}
