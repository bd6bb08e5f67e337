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

    /** Loads the class named by its argument and says so, or prints the class path resource {@code resource:NAME}; exits. */
    static final class Probe {
        public static void main(String[] args) throws Exception {
            if (args[0].startsWith(RESOURCE)) {
                try (java.io.InputStream in = Probe.class.getClassLoader().getResourceAsStream(args[0].substring(RESOURCE.length()))) {
                    System.out.write(in == null ? "none".getBytes(java.nio.charset.StandardCharsets.UTF_8) : in.readAllBytes());
                    System.out.flush();
                }
                return;
            }
            Class.forName(args[0]);
            System.out.println("loaded " + args[0]);
        }
    }

    private static final String RESOURCE = "resource:";
    private static final String SPRING = "org.springframework.boot.SpringApplication";

    @Test
    void start_serverChild_loadsSpringFromTheTrainedArchive() throws Exception {
        assumeTrue(ChildClassArchive.enabled(), "no " + ChildClassArchive.PROPERTY + " (the build sets it)");
        Path classLog = tmp.resolve("class-load.log");
        awaitServerArchive();

        Path[] out = run(ChildJvm.serverClasspath(), List.of("-Xlog:class+load=info:file=" + classLog), SPRING);

        assertThat(Files.readString(out[0]).strip()).isEqualTo("loaded " + SPRING);
        assertThat(Files.readAllLines(classLog)).as("the class load log")
                .anyMatch(l -> l.contains(" " + SPRING + " source: shared objects file (top)"));
    }

    @Test
    void start_archiveOfAnotherClassPath_childRunsAndPrintsNothingAboutIt() throws Exception {
        assumeTrue(ChildClassArchive.enabled(), "no " + ChildClassArchive.PROPERTY + " (the build sets it)");
        Path serverArchive = awaitServerArchive();

        // the agent's class path lacks Logback, so the server's archive does not match it; a later option wins
        Path[] out = run(ChildJvm.agentClasspath(), List.of("-XX:SharedArchiveFile=" + serverArchive), SPRING);

        assertThat(Files.readString(out[0]).strip()).isEqualTo("loaded " + SPRING);
        assertThat(Files.readString(out[1])).as("stderr").isEmpty();
    }

    @Test
    void start_serverChild_readsThisBuildsBuildInfo() throws Exception {
        // the one file the build rewrites each time: packed apart from the archived classes, never stale
        Path buildInfo = Path.of("target", "classes", "META-INF", "build-info.properties");
        assumeTrue(ChildClassArchive.enabled() && Files.exists(buildInfo), "no archive, or no " + buildInfo);

        Path[] out = run(ChildJvm.serverClasspath(), List.of(), RESOURCE + "META-INF/build-info.properties");

        assertThat(Files.readString(out[0])).isEqualTo(Files.readString(buildInfo));
    }

    /**
     * The server children's archive: trained by this JVM's first server child, or by the build's other
     * test JVM (whose training holds the lock, its children starting without the archive meanwhile).
     */
    private Path awaitServerArchive() throws Exception {
        run(ChildJvm.serverClasspath(), List.of(), SPRING); // trains it here unless another JVM did or does
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(4);
        Path archive = ChildJvm.archive(ChildJvm.serverClasspath());
        while (archive == null && System.nanoTime() < deadline) {
            Thread.sleep(500);
            archive = ChildJvm.archive(ChildJvm.serverClasspath());
        }
        assertThat(archive).as("the server children's archive (see target/child-cds/*.training.log)").isNotNull();
        return archive;
    }

    private Path[] run(ChildClasspath classpath, List<String> jvmOptions, String probe) throws Exception {
        Path[] out = LOGS.next("probe-" + classpath.name());
        Process p = ChildJvm.start(Probe.class.getName(), jvmOptions, classpath, List.of(probe), out[0], out[1]);
        assertThat(p.waitFor(2, TimeUnit.MINUTES)).as("the probe ends").isTrue();
        assertThat(p.exitValue()).as("exit value; stderr: %s", ChildJvm.tail(out[1], 2000)).isZero();
        return out;
    }
}
