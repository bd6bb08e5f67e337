package org.holdfast.bench.workload;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.List;

/** Edits an ext4 image through a loop mount, so the kernel's ext4 allocates blocks as in production. */
final class MountedExt4Editor implements Ext4Editor {
    private final Path mountPoint;

    private MountedExt4Editor(Path mountPoint) {
        this.mountPoint = mountPoint;
    }

    /** Loop-mounts the image; fails if this machine cannot (not root, no loop devices). */
    static MountedExt4Editor mount(Path image, Path mountPoint) throws IOException {
        Files.createDirectories(mountPoint);
        Processes.run(List.of("mount", "-o", "loop,noatime", image.toString(), mountPoint.toString()), null);
        return new MountedExt4Editor(mountPoint);
    }

    /** Whether loop mounting works here: tries it on a small scratch image. */
    static boolean available(Path scratch) {
        Path img = scratch.resolve("probe.img");
        Path mnt = scratch.resolve("probe.mnt");
        try {
            Files.createDirectories(scratch);
            Ext4Image.format(img, 8L << 20, 1);
            mount(img, mnt).close();
            return true;
        } catch (IOException e) {
            return false;
        } finally {
            try {
                Files.deleteIfExists(img);
                Files.deleteIfExists(mnt);
            } catch (IOException ignored) {
                // A leftover probe file is harmless.
            }
        }
    }

    private Path resolve(String path) throws IOException {
        Path p = mountPoint.resolve(path);
        Files.createDirectories(p.getParent());
        return p;
    }

    @Override
    public void copyTree(Path source) throws IOException {
        Processes.run(List.of("cp", "-a", source.toString() + "/.", mountPoint.toString() + "/"), null);
    }

    @Override
    public void delete(List<String> paths) throws IOException {
        for (String p : paths) {
            Files.deleteIfExists(mountPoint.resolve(p));
        }
    }

    @Override
    public void writeFile(String path, byte[] content) throws IOException {
        Path target = resolve(path);
        Path tmp = target.resolveSibling(target.getFileName() + ".tmp");
        Files.write(tmp, content);
        Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    @Override
    public void append(String path, byte[] more) throws IOException {
        Files.write(resolve(path), more, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }

    @Override
    public void installFile(String path, Path source) throws IOException {
        Path target = resolve(path);
        Path tmp = target.resolveSibling(target.getFileName() + ".tmp");
        Files.copy(source, tmp, StandardCopyOption.REPLACE_EXISTING);
        Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    @Override
    public void writePages(String path, int pageSize, long[] pages, byte[] data) throws IOException {
        try (FileChannel ch = FileChannel.open(mountPoint.resolve(path), StandardOpenOption.WRITE)) {
            for (int i = 0; i < pages.length; i++) {
                ByteBuffer b = ByteBuffer.wrap(data, i * pageSize, pageSize);
                long pos = pages[i] * pageSize;
                while (b.hasRemaining()) {
                    pos += ch.write(b, pos);
                }
            }
            ch.force(false);
        }
    }

    @Override
    public void close() throws IOException {
        Processes.run(List.of("sync"), null);
        Processes.run(List.of("umount", mountPoint.toString()), null);
    }
}
