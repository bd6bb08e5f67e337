package org.holdfast.gc;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import org.holdfast.common.io.DurableReplace;

/**
 * Replaces a small GC file (checkpoint, sweep skip table, GMA range) all or nothing through
 * {@link DurableReplace}, translating its failure once into a {@link GcStoreException} that names
 * the GC store. A directory that cannot be forced fails the write too: the BOSC checkpoint deletes
 * the log below itself once written, so a rename lost on power loss would lose updates.
 */
public final class AtomicFileReplace {
    private AtomicFileReplace() {
    }

    /** Writes {@code content} (position to limit) as {@code dir/name}; {@code store} names the file in errors. */
    public static void write(Path dir, String name, ByteBuffer content, String store) {
        try {
            DurableReplace.write(dir, name, content);
        } catch (IOException e) {
            throw new GcStoreException(store, dir.resolve(name), null, "cannot replace (via " + name + ".tmp): " + e.getMessage(), e);
        }
    }
}
