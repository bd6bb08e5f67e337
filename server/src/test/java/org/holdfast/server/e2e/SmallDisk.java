package org.holdfast.server.e2e;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.holdfast.server.store.DiskSpace;

/**
 * A small disk for disk-full tests: a tmpfs of {@code size} bytes mounted on a directory where the
 * machine allows it (root, or CI with the privilege), else a simulated one of the same size behind
 * {@link DiskSpace#simulated} (the store's free-space checks see it; real ENOSPC never happens).
 * {@link #kind()} says which one a test ran on. Set {@code -Dholdfast.test.no-mount=true} to force
 * the simulation. Unmounts on {@link #close()}.
 */
public final class SmallDisk implements AutoCloseable {
    private final Path dir;
    private final long size;
    private final boolean mounted;
    private int fillers;

    private SmallDisk(Path dir, long size, boolean mounted) {
        this.dir = dir;
        this.size = size;
        this.mounted = mounted;
    }

    /** Mounts a tmpfs of {@code size} bytes on {@code dir} (created), or falls back to a simulated disk. */
    public static SmallDisk mount(Path dir, long size) {
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        boolean ok = !Boolean.getBoolean("holdfast.test.no-mount")
                && run(List.of("mount", "-t", "tmpfs", "-o", "size=" + size, "tmpfs", dir.toString())) == 0;
        SmallDisk d = new SmallDisk(dir, size, ok);
        System.out.println("[disk-full] " + d.kind() + " disk of " + size + " bytes at " + dir);
        return d;
    }

    /** True if this is a real tmpfs (writes can hit ENOSPC), false if simulated. */
    public boolean real() {
        return mounted;
    }

    /** "tmpfs" or "simulated", for log lines and assumption messages. */
    public String kind() {
        return mounted ? "tmpfs" : "simulated (mount not allowed here)";
    }

    public Path dir() {
        return dir;
    }

    public long size() {
        return size;
    }

    /** The free space the store sees. */
    public long usable() {
        DiskSpace d = mounted ? DiskSpace.of(dir) : DiskSpace.simulated(dir, size);
        return d.usableBytesUnchecked();
    }

    /** Writes a filler file so that about {@code leave} bytes stay free; returns it (delete it to free the space). */
    public Path fillLeaving(long leave) {
        Path f = dir.resolve("filler-" + (++fillers));
        long n = usable() - leave;
        byte[] chunk = new byte[1 << 16];
        java.util.Arrays.fill(chunk, (byte) 0x5a);
        try (OutputStream out = Files.newOutputStream(f)) {
            for (long w = 0; w < n; ) {
                int k = (int) Math.min(chunk.length, n - w);
                out.write(chunk, 0, k);
                w += k;
            }
        } catch (IOException e) {
            if (!e.getMessage().contains("No space left")) {
                throw new UncheckedIOException(e);
            }
            // full to the last block: exactly what a test filling "everything" wants
        }
        return f;
    }

    @Override
    public void close() {
        if (mounted && run(List.of("umount", dir.toString())) != 0) {
            run(List.of("umount", "-l", dir.toString()));
        }
    }

    private static int run(List<String> cmd) {
        try {
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return -1;
            }
            if (p.exitValue() != 0) {
                System.out.println("[disk-full] " + String.join(" ", cmd) + " failed: " + out.strip());
            }
            return p.exitValue();
        } catch (IOException e) {
            return -1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        }
    }
}
