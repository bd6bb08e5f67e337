package org.holdfast.client.qcow2;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A {@code qemu-nbd} serving one image read-only on a private unix socket, with a dirty bitmap
 * when asked, to the agent's connections and one {@code nbdinfo} at a time. It forks once the socket listens, and it is not persistent: it exits when its
 * last client disconnects, so even an agent killed with SIGKILL leaves no server holding the
 * image's lock (the kernel closes the agent's socket); its directory goes at the next qcow2 backup
 * ({@link NbdSocketDirs}).
 */
final class QemuNbd implements AutoCloseable {
    private final Path dir;
    private final Path socket;
    private final long pid;

    private QemuNbd(Path dir, Path socket, long pid) {
        this.dir = dir;
        this.socket = socket;
        this.pid = pid;
    }

    /** Serves {@code image} (qcow2) read-only, exposing {@code bitmap} too unless it is null. */
    static QemuNbd start(Path image, String bitmap) throws IOException {
        Path dir = NbdSocketDirs.create(NbdSocketDirs.systemTemp());
        Path socket = dir.resolve("s");
        Path pidFile = dir.resolve(NbdSocketDirs.PID_FILE);
        List<String> cmd = new ArrayList<>(List.of("qemu-nbd", "--read-only", "--format=qcow2", "--shared=" + (NbdPool.CONNECTIONS + 1),
                "--fork", "--pid-file=" + pidFile, "--socket=" + socket));
        if (bitmap != null) {
            cmd.add("--bitmap=" + bitmap);
        }
        cmd.add(image.toString());
        try {
            Tool.run(cmd);
            return new QemuNbd(dir, socket, Long.parseLong(Files.readString(pidFile).strip()));
        } catch (IOException | RuntimeException e) {
            deleteDir(dir);
            throw e;
        }
    }

    Path socket() {
        return socket;
    }

    /** Stops the server (if its clients have not made it exit already) and waits for it to release the image. */
    @Override
    public void close() {
        ProcessHandle.of(pid).ifPresent(p -> {
            p.destroy();
            try {
                p.onExit().get(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                p.destroyForcibly();
            }
        });
        deleteDir(dir);
    }

    private static void deleteDir(Path dir) {
        try (var files = Files.list(dir)) {
            for (Path f : files.toList()) {
                Files.deleteIfExists(f);
            }
            Files.deleteIfExists(dir);
        } catch (IOException ignored) {
            // the next qcow2 backup removes it (NbdSocketDirs)
        }
    }
}
