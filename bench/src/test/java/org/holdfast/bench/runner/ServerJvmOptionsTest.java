package org.holdfast.bench.runner;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The bench reads server/bin/jvm.options as the launcher does: comments dropped, the caller's options last. */
class ServerJvmOptionsTest {

    @Test
    void parse_commentsAndBlanksDropped_oneOptionALine() {
        assertThat(ServerJvmOptions.parse(List.of("# why", "", "  -XX:CompileThresholdScaling=8  # measured", "-XX:+UseSerialGC",
                "-Dx=a b"), false)).containsExactly("-XX:CompileThresholdScaling=8", "-XX:+UseSerialGC", "-Dx=a b");
    }

    @Test
    void parse_anotherCollectorChosen_theFilesCollectorDropped() {
        assertThat(ServerJvmOptions.parse(List.of("-XX:+UseSerialGC", "-XX:CompileThresholdScaling=8"), true))
                .containsExactly("-XX:CompileThresholdScaling=8");
    }

    @Test
    void forJar_fileBesideTheLauncherOfTheJarsLayout_thenTheCallersOptions(@TempDir Path tmp) throws Exception {
        Path lib = Files.createDirectories(tmp.resolve("lib"));
        Files.createDirectories(tmp.resolve("bin"));
        Files.write(tmp.resolve("bin/jvm.options"), List.of("-XX:+UseSerialGC", "-XX:CompileThresholdScaling=8"));

        assertThat(ServerJvmOptions.forJar(lib.resolve("holdfast-server.jar"), List.of("-Xmx1g", "-XX:+UseG1GC")))
                .containsExactly("-XX:CompileThresholdScaling=8", "-Xmx1g", "-XX:+UseG1GC");
    }

    @Test
    void theRepositorysFile_isFound_andHoldsNoBlankOrCommentOption() throws Exception {
        Path file = ServerJvmOptions.find(Path.of("/nonexistent/target/holdfast-server.jar")).orElseThrow();
        assertThat(file.toString()).endsWith("server/bin/jvm.options");
        assertThat(ServerJvmOptions.parse(Files.readAllLines(file), false)).isNotEmpty().allMatch(o -> o.startsWith("-"));
    }
}
