package org.holdfast.server.e2e;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * The machine's Docker daemon for the deployment tests: whether one runs (the tests are skipped with
 * the reason where none can), and the images built from this checkout, once per JVM: the local base
 * image (docker/build-base-image.sh, debootstrap) and the server and agent images from docker/.
 */
final class DockerHost {
    static final String SERVER_IMAGE = "holdfast/server:latest";
    static final String AGENT_IMAGE = "holdfast/agent:latest";
    private static boolean built;

    private DockerHost() {
    }

    /** The repository root (the tests run in server/). */
    static Path repo() {
        return Path.of("").toAbsolutePath().getParent();
    }

    /** Skips the calling test, with the reason, unless a Docker daemon answers; builds the images once. */
    static synchronized void requireImages() {
        Result info = run(Duration.ofSeconds(20), "docker", "info", "--format", "{{.ServerVersion}}");
        Assumptions.assumeTrue(info.exit == 0, "no Docker daemon answers here (docker info: " + info.output.strip()
                + "); .ci/run installs docker.io and starts dockerd");
        if (built) {
            return;
        }
        Path root = repo();
        check(run(Duration.ofMinutes(15), root.resolve("docker/build-base-image.sh").toString()), "building the base image");
        check(run(Duration.ofMinutes(10), "docker", "build", "-q", "-f", root.resolve("docker/Dockerfile.server").toString(),
                "-t", SERVER_IMAGE, root.toString()), "building " + SERVER_IMAGE);
        check(run(Duration.ofMinutes(10), "docker", "build", "-q", "-f", root.resolve("docker/Dockerfile.agent").toString(),
                "-t", AGENT_IMAGE, root.toString()), "building " + AGENT_IMAGE);
        built = true;
    }

    /** Runs a command to its end (or kills it after {@code timeout}); stdout and stderr merged. */
    static Result run(Duration timeout, String... command) {
        return run(timeout, null, List.of(command));
    }

    static Result run(Duration timeout, Path dir, List<String> command) {
        try {
            Path out = Files.createTempFile("holdfast-docker", ".out");
            try {
                ProcessBuilder pb = new ProcessBuilder(new ArrayList<>(command)).redirectErrorStream(true).redirectOutput(out.toFile());
                if (dir != null) {
                    pb.directory(dir.toFile());
                }
                Process p = pb.start();
                if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                    p.destroyForcibly();
                    return new Result(-1, "timed out after " + timeout + ": " + String.join(" ", command) + "\n" + Files.readString(out));
                }
                return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
            } finally {
                Files.deleteIfExists(out);
            }
        } catch (IOException e) {
            return new Result(-1, e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Result(-1, e.toString());
        }
    }

    /** Throws with the command's output unless it exited 0; returns its output. */
    static String check(Result r, String what) {
        if (r.exit != 0) {
            throw new IllegalStateException(what + " failed (exit " + r.exit + "):\n" + r.output);
        }
        return r.output;
    }

    /** A finished command. */
    record Result(int exit, String output) {
    }
}
