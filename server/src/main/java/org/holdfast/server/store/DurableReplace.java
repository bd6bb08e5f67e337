package org.holdfast.server.store;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * Replaces a small file all or nothing, durably: the bytes go to {@code name.tmp}, are forced, renamed
 * over {@code name}, and the directory is forced so the rename survives a crash too. Unlike the GC's
 * {@code AtomicFileReplace}, a directory that cannot be forced is an error: the callers' records must be
 * on disk when they return.
 */
public final class DurableReplace {
    private DurableReplace() {
    }

    /** Writes {@code content} (position to limit) as {@code dir/name}, creating {@code dir} if needed. */
    public static void write(Path dir, String name, ByteBuffer content) throws IOException {
        Files.createDirectories(dir);
        Path tmp = dir.resolve(name + ".tmp");
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            while (content.hasRemaining()) {
                ch.write(content);
            }
            ch.force(true);
        }
        Files.move(tmp, dir.resolve(name), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        }
    }
}
