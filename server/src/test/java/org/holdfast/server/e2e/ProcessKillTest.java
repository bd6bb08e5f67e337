package org.holdfast.server.e2e;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/** Checks the harness's kill: it must be SIGKILL (no shutdown hook, no flush), not a polite SIGTERM. */
class ProcessKillTest {
    private static final LogDir logs = new LogDir("ProcessKillTest");

    @TempDir
    Path tmp;

    @Test
    void sigkill_runningChild_endsWithSignal9AndSkipsShutdownHooks() throws Exception {
        Path marker = tmp.resolve("marker");
        Process p = startTarget(marker);

        boolean bySignal = ChildJvm.sigkill(p);

        assertThat(bySignal).as("exit value %d", p.exitValue()).isTrue();
        assertThat(p.exitValue()).isEqualTo(ChildJvm.SIGKILL_EXIT);
        assertThat(marker).as("a SIGKILLed JVM runs no shutdown hook").doesNotExist();
    }

    @Test
    void destroy_runningChild_runsShutdownHooks() throws Exception {
        // The control: a graceful stop does run the hook, so the test above can tell them apart.
        Path marker = tmp.resolve("marker");
        Process p = startTarget(marker);

        p.destroy();
        p.waitFor();

        assertThat(p.exitValue()).isEqualTo(143);
        assertThat(marker).exists();
    }

    private Process startTarget(Path marker) throws Exception {
        Path[] out = logs.next("kill-target");
        Process p = ChildJvm.start(KillTarget.class.getName(), List.of("-Xmx32m"), ChildJvm.agentClasspath(),
                List.of(marker.toString()), out[0], out[1]);
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (!(Files.exists(out[0]) && Files.readString(out[0]).contains("ready"))) {
            assertThat(p.isAlive()).as("child died: %s", ChildJvm.tail(out[1], 2000)).isTrue();
            assertThat(System.nanoTime()).as("child not ready in 60 s").isLessThan(deadline);
            Thread.sleep(20);
        }
        return p;
    }
}
