package org.holdfast.client.qcow2;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs one of the QEMU or libnbd command-line tools and returns its output, or fails with it. */
final class Tool {
    private static final long TIMEOUT_SECONDS = 300;

    private Tool() {
    }

    /** Runs {@code command}; a non-zero exit is an IOException carrying what the tool said. */
    static String run(List<String> command) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            throw new IOException(command.get(0) + " is not installed (" + e.getMessage() + ")", e);
        }
        try {
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException(command.get(0) + " did not finish within " + TIMEOUT_SECONDS + " s");
            }
            if (p.exitValue() != 0) {
                throw new IOException(command.get(0) + " failed (exit " + p.exitValue() + "): " + out.strip());
            }
            return out;
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while running " + command.get(0), e);
        }
    }
}
