package org.holdfast.common.io;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * Replaces a small file all or nothing, durably: the bytes go to {@code name.tmp}, are forced,
 * renamed over {@code name}, and the directory is forced so that the rename survives a power loss
 * too. A crash leaves the old file or the new one, never a torn one.
 *
 * <p>A directory that cannot be forced is an error, for every caller: the rename may still be in
 * the page cache only, and callers act on the new file as durable once this returns (the BOSC
 * checkpoint deletes the log below it, a node generation or index owner is answered to the master).
 * Tolerating it would turn a power loss into a lost rename behind an action that assumed it. The
 * GC once ignored it "because some file systems cannot fsync a directory"; none that Holdfast
 * supports (Linux local file systems) refuses.
 *
 * <p>Throws the plain {@link IOException}: each caller translates it once, into its own layer's
 * exception with its own store name.
 */
public final class DurableReplace {
    private DurableReplace() {
    }

    /**
     * Writes {@code content} (position to limit) as {@code dir/name}, creating {@code dir} if needed;
     * a leftover {@code name.tmp} from an earlier crash is overwritten.
     */
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
