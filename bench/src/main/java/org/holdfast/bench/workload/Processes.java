package org.holdfast.bench.workload;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

/** Runs a short external command (mkfs, debugfs, dpkg-deb) and returns its standard output. */
public final class Processes {
    private Processes() {
    }

    /** Runs {@code cmd} in {@code dir} (or the current directory); a non-zero exit is an IOException with stderr. */
    public static String run(List<String> cmd, Path dir) throws IOException {
        return run(cmd, dir, null);
    }

    /** As {@link #run(List, Path)}, with extra environment variables. */
    public static String run(List<String> cmd, Path dir, java.util.Map<String, String> env) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(cmd);
        if (dir != null) {
            pb.directory(dir.toFile());
        }
        if (env != null) {
            pb.environment().putAll(env);
        }
        Path err = java.nio.file.Files.createTempFile("bench-cmd", ".err");
        pb.redirectError(err.toFile());
        try {
            Process p = pb.start();
            p.getOutputStream().close();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            int rc = p.waitFor();
            if (rc != 0) {
                String msg = java.nio.file.Files.readString(err);
                throw new IOException(String.join(" ", cmd.subList(0, Math.min(3, cmd.size()))) + " exited " + rc + ": "
                        + msg.substring(0, Math.min(2000, msg.length())));
            }
            return out;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted running " + cmd.get(0), e);
        } finally {
            java.nio.file.Files.deleteIfExists(err);
        }
    }
}
