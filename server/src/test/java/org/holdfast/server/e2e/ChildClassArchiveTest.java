package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The process tests' children map their class path's class-data-sharing archive ({@link
 * ChildClassArchive}): a server child loads Spring from the archive, and a child handed an archive
 * it cannot use starts anyway and prints nothing about it (the agent tests parse its output).
 */
class ChildClassArchiveTest {
    private static final LogDir LOGS = new LogDir("ChildClassArchiveTest");

    @TempDir
    Path tmp;

    /** Loads the class named by its argument, says so, exits. */
    static final class Probe {
        public static void main(String[] args) throws Exception {
            Class.forName(args[0]);
            System.out.println("loaded " + args[0]);
        }
    }

    @Test
    void start_serverChild_loadsSpringFromTheTrainedArchive() throws Exception {
        assumeTrue(ChildClassArchive.enabled(), "no " + ChildClassArchive.PROPERTY + " (the build sets it)");
        Path classLog = tmp.resolve("class-load.log");

        Path[] out = run(ChildJvm.serverClasspath(), List.of("-Xlog:class+load=info:file=" + classLog));

        assertThat(Files.readString(out[0]).strip()).isEqualTo("loaded org.springframework.boot.SpringApplication");
        assertThat(Files.readAllLines(classLog)).as("the class load log")
                .anyMatch(l -> l.contains(" org.springframework.boot.SpringApplication source: shared objects file (top)"));
    }

    @Test
    void start_archiveOfAnotherClassPath_childRunsAndPrintsNothingAboutIt() throws Exception {
        assumeTrue(ChildClassArchive.enabled(), "no " + ChildClassArchive.PROPERTY + " (the build sets it)");
        run(ChildJvm.serverClasspath(), List.of()); // trains the server archive if no test did yet
        Path serverArchive = ChildJvm.archive(ChildJvm.serverClasspath());
        assertThat(serverArchive).as("the server children's archive").isNotNull();

        // the agent's class path lacks Logback, so the server's archive does not match it; a later option wins
        Path[] out = run(ChildJvm.agentClasspath(), List.of("-XX:SharedArchiveFile=" + serverArchive));

        assertThat(Files.readString(out[0]).strip()).isEqualTo("loaded org.springframework.boot.SpringApplication");
        assertThat(Files.readString(out[1])).as("stderr").isEmpty();
    }

    private Path[] run(ChildClasspath classpath, List<String> jvmOptions) throws Exception {
        Path[] out = LOGS.next("probe-" + classpath.name());
        Process p = ChildJvm.start(Probe.class.getName(), jvmOptions, classpath, List.of("org.springframework.boot.SpringApplication"),
                out[0], out[1]);
        assertThat(p.waitFor(2, TimeUnit.MINUTES)).as("the probe ends").isTrue();
        assertThat(p.exitValue()).as("exit value; stderr: %s", ChildJvm.tail(out[1], 2000)).isZero();
        return out;
    }
}
