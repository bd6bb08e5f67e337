package org.holdfast.gc;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * Replaces a small GC file (checkpoint, sweep skip table) all or nothing: the new bytes go to
 * {@code name.tmp}, are forced, renamed over {@code name} and the directory is forced, so a crash
 * leaves either the old file or the new one, never a torn one.
 */
public final class AtomicFileReplace {
    private AtomicFileReplace() {
    }

    /** Writes {@code content} (position to limit) as {@code dir/name}; {@code store} names the file in errors. */
    public static void write(Path dir, String name, ByteBuffer content, String store) {
        Path tmp = dir.resolve(name + ".tmp");
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            while (content.hasRemaining()) {
                ch.write(content);
            }
            ch.force(true);
        } catch (IOException e) {
            throw new GcStoreException(store, tmp, null, "cannot write: " + e.getMessage(), e);
        }
        Path target = dir.resolve(name);
        try {
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
                d.force(true);
            } catch (IOException ignored) {
                // some file systems cannot fsync a directory; the rename is still atomic
            }
        } catch (IOException e) {
            throw new GcStoreException(store, target, null, "cannot rename: " + e.getMessage(), e);
        }
    }
}
