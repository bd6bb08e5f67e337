package org.holdfast.server.engine;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.regex.Pattern;
import org.holdfast.common.io.DurableReplace;
import org.holdfast.common.protocol.StartOverReason;
import org.holdfast.server.store.StoreException;

/**
 * Which worker registration a worker's dedup index was last readied for: the file {@code worker-id}
 * in the index directory, the worker id and the epoch in decimal ASCII, a space between, and a line
 * feed, written (temporary file, fsync, atomic rename) after each registration. A host that takes
 * over another worker's id (an admin replaced a lost worker with this node), or is handed back an id
 * that another node held meanwhile, must not answer that worker's dedup calls from its index: it was
 * built for another id, or missed the forgets sent to the other node. {@link #mustStartOver} holds the
 * rule (docs/architecture.md, "Replacing a lost worker").
 */
final class IndexOwnerFile {
    static final String NAME = "worker-id";
    /** Where {@link #write} puts the content before its rename ({@link DurableReplace}'s temporary name). */
    static final String TMP = NAME + ".tmp";
    /** Longest content read: two numbers of up to 20 digits, a space and a line feed; more is not ours. */
    private static final int MAX_BYTES = 42;
    private static final Pattern CONTENT = Pattern.compile("([1-9][0-9]{0,19}) ([1-9][0-9]{0,19})\n");

    private final Path dir;
    private final Path file;

    IndexOwnerFile(Path indexDir) {
        this.dir = indexDir;
        this.file = indexDir.resolve(NAME);
    }

    /**
     * True if the index must be deleted before it serves worker {@code workerId} registered at
     * {@code epoch}: a new membership (epoch 1: the master removed the earlier one and GC may have
     * freed PBNs the index names); a file naming another worker id, or one that cannot be read; or a
     * file whose epoch is not {@code epoch - 1}. Each registration raises the epoch by one, so a gap
     * means registrations this index did not see: another node held the id meanwhile (and heard the
     * forgets), or a registration of this node ended before its file was written; and a lower epoch
     * means a master whose catalog went back. Either way the index may name freed PBNs. Without the
     * file the index is kept: it was written by a release before the file existed, for the worker
     * this node was then, which is this worker unless an admin replaced a worker with this node since
     * (docs/operations.md: a host reused for a replacement starts with an empty {@code dedup-worker}).
     */
    boolean mustStartOver(long workerId, long epoch) {
        return startOverReason(workerId, epoch) != null;
    }

    /** As {@link #mustStartOver}, saying why; null if the index is kept. */
    StartOverReason startOverReason(long workerId, long epoch) {
        if (epoch == 1) {
            return StartOverReason.NEW_MEMBERSHIP;
        }
        String owner = read();
        if (owner == null || owner.equals(workerId + " " + (epoch - 1))) {
            return null;
        }
        if (owner.isEmpty()) {
            return StartOverReason.UNREADABLE_OWNER;
        }
        return owner.startsWith(workerId + " ") ? StartOverReason.EPOCH_GAP : StartOverReason.OTHER_ID;
    }

    /** The file's content without its line feed, "" if it is not an id and epoch, null if there is no file. */
    private String read() {
        byte[] b;
        try {
            if (Files.size(file) > MAX_BYTES) {
                return "";
            }
            b = Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            throw StoreException.translate("dedup-worker", file.toString(), null, e);
        }
        String s = new String(b, StandardCharsets.US_ASCII);
        return CONTENT.matcher(s).matches() ? s.substring(0, s.length() - 1) : "";
    }

    /** Records that the index serves worker {@code workerId} at {@code epoch}, durably, creating the directory if needed. */
    void write(long workerId, long epoch) {
        try {
            DurableReplace.write(dir, file.getFileName().toString(),
                    ByteBuffer.wrap((workerId + " " + epoch + "\n").getBytes(StandardCharsets.US_ASCII)));
        } catch (IOException e) {
            throw StoreException.translate("dedup-worker", file.toString(), null, e);
        }
    }
}
