package org.holdfast.client;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A live agent run in another process, for tests: makes a temporary file as the agent does
 * (TempFileGuard, locked, bytes written), prints its path, and holds it until stdin closes or the
 * process is killed.
 */
public final class LiveTempFileHolder {
    private LiveTempFileHolder() {
    }

    /** Args: directory, prefix, suffix, bytes to write. */
    public static void main(String[] args) throws IOException {
        TempFileGuard guard = TempFileGuard.create(Path.of(args[0]), args[1], args[2]);
        try (FileChannel ch = FileChannel.open(guard.path(), StandardOpenOption.WRITE)) {
            guard.lock(ch);
            ch.write(ByteBuffer.allocate(Integer.parseInt(args[3])), 0);
            System.out.println(guard.path());
            System.out.flush();
            while (System.in.read() >= 0) {
                // hold the file until the test closes our stdin (or kills us)
            }
            Files.deleteIfExists(guard.path());
        }
        guard.release();
    }

    /** Starts a holder for {@code <prefix><random><suffix>} in {@code dir}; returns once the file is locked and written. */
    public static Held start(Path dir, String prefix, String suffix, int bytes) throws IOException {
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), LiveTempFileHolder.class.getName(),
                dir.toString(), prefix, suffix, Integer.toString(bytes))
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        String line = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream())).readLine();
        if (line == null) {
            p.destroyForcibly();
            throw new IOException("the holder process ended before it made its file");
        }
        return new Held(p, Path.of(line));
    }

    /** A holder process and its file. */
    public record Held(Process process, Path file) {
        /** SIGKILL: no shutdown hook runs, the file stays behind unlocked. */
        public void kill() throws InterruptedException {
            process.destroyForcibly();
            process.waitFor();
        }
    }
}
