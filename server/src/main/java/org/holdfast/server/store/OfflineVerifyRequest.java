package org.holdfast.server.store;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.Writer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;

/**
 * A verify pass that the offline fsck asks the server to run at its next start, in the file
 * {@value #FILE} of the data directory: fsck works on a scratch copy of the catalog and must not
 * write the real one, so the corrupt blocks it found (and marked bad only in its copy) travel here.
 * The server queues a pass over everything that reads them again whatever its window and marks
 * those its own read finds corrupt (which flags the volumes that use them, so their next backups
 * repair them: what the online fsck's pass does) and deletes the file once that pass succeeded, so
 * a crash before then runs it again. The blocks are suspects, never marks taken from the file.
 *
 * <p>Text, UTF-8, one {@code name=value} per line:
 * <pre>
 * version=1
 * requestedAt=EPOCH_MILLIS
 * by=fsck
 * full=false|true     (true: more corrupt blocks than listed, or an unreadable request merged; the pass reads every block)
 * pbn=N               (0 to MAX_PBNS lines: blocks the pass reads again)
 * </pre>
 * Written to a temporary file, synced and renamed; a second fsck before the server starts adds its
 * blocks to those already requested.
 */
public final class OfflineVerifyRequest {
    /** The file in the data directory. */
    public static final String FILE = "verify-requested";
    static final int VERSION = 1;
    /** PBNs listed at most; beyond, the request asks for a full pass instead. */
    public static final int MAX_PBNS = 1_000_000;
    /** The longest line a request holds ("requestedAt=" and a long). */
    private static final int MAX_LINE = 64;
    /** The largest file a request takes: its header and {@value #MAX_PBNS} lines "pbn=" and a long. */
    private static final long MAX_BYTES = 4 * MAX_LINE + (long) MAX_PBNS * 24;

    private final long requestedAtMillis;
    private final String by;
    private final boolean full;
    private final long[] pbns;

    private OfflineVerifyRequest(long requestedAtMillis, String by, boolean full, long[] pbns) {
        this.requestedAtMillis = requestedAtMillis;
        this.by = by;
        this.full = full;
        this.pbns = pbns;
    }

    public long requestedAtMillis() {
        return requestedAtMillis;
    }

    public String by() {
        return by;
    }

    /** True if the pass must read every block (more corrupt blocks were found than a request lists). */
    public boolean full() {
        return full;
    }

    /** The blocks to mark bad before the pass, ascending. */
    public long[] pbns() {
        return pbns.clone();
    }

    /** Where the request lives in the data directory {@code root}. */
    public static Path file(Path root) {
        return root.resolve(FILE);
    }

    /**
     * Asks for a pass, listing {@code corrupt} to mark bad first (merged with a request that is
     * there already); returns the request as written.
     */
    public static OfflineVerifyRequest write(Path root, String by, long[] corrupt, long nowMillis) {
        OfflineVerifyRequest old;
        boolean full = false;
        try {
            old = read(root);
        } catch (CorruptDataException e) {
            // what it asked for is unknown: a pass that reads every block covers it
            old = null;
            full = true;
        }
        long[] all = corrupt.clone();
        if (old != null) {
            all = Arrays.copyOf(all, all.length + old.pbns.length);
            System.arraycopy(old.pbns, 0, all, corrupt.length, old.pbns.length);
            full = full || old.full;
        }
        all = Arrays.stream(all).sorted().distinct().toArray();
        if (all.length > MAX_PBNS) {
            full = true;
            all = new long[0];
        }
        OfflineVerifyRequest r = new OfflineVerifyRequest(nowMillis, by, full, all);
        Path target = file(root);
        Path tmp = root.resolve(FILE + "." + ProcessHandle.current().pid() + ".tmp");
        try {
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                    StandardOpenOption.WRITE);
                 Writer w = new java.io.BufferedWriter(java.nio.channels.Channels.newWriter(ch, StandardCharsets.UTF_8))) {
                w.write("version=" + VERSION + "\nrequestedAt=" + nowMillis + "\nby=" + by.replaceAll("[\\r\\n=]", "_")
                        + "\nfull=" + full + "\n");
                for (long p : all) {
                    w.write("pbn=" + p + "\n");
                }
                w.flush();
                ch.force(true);
            }
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            DataLog.forceDirectory(root);
        } catch (IOException e) {
            try {
                Files.deleteIfExists(tmp);
            } catch (IOException ignored) {
                // the disk that refused the request may refuse this too
            }
            throw StoreException.translate("verify-request", target.toString(), null, e);
        }
        return r;
    }

    /** The request in {@code root}, or null if there is none. */
    public static OfflineVerifyRequest read(Path root) {
        Path f = file(root);
        try {
            // checked before reading: a line is read whole before its length can be judged
            if (Files.size(f) > MAX_BYTES) {
                throw bad(f, Files.size(f) + " bytes, more than a request of " + MAX_PBNS + " blocks takes");
            }
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            throw StoreException.translate("verify-request", f.toString(), null, e);
        }
        long at = -1;
        String by = "";
        boolean full = false;
        int version = -1;
        long[] pbns = new long[16];
        int n = 0;
        try (BufferedReader in = Files.newBufferedReader(f, StandardCharsets.UTF_8)) {
            for (String line; (line = in.readLine()) != null; ) {
                int eq = line.indexOf('=');
                if (line.length() > MAX_LINE || eq < 0) {
                    throw bad(f, "line '" + line.substring(0, Math.min(line.length(), MAX_LINE)) + "'");
                }
                String v = line.substring(eq + 1);
                switch (line.substring(0, eq)) {
                    case "version" -> version = Integer.parseInt(v);
                    case "requestedAt" -> at = Long.parseLong(v);
                    case "by" -> by = v;
                    case "full" -> full = Boolean.parseBoolean(v);
                    case "pbn" -> {
                        if (n == MAX_PBNS) {
                            throw bad(f, "more than " + MAX_PBNS + " blocks");
                        }
                        if (n == pbns.length) {
                            pbns = Arrays.copyOf(pbns, Math.min(MAX_PBNS, n * 2));
                        }
                        pbns[n++] = Long.parseLong(v);
                    }
                    default -> { } // a later field
                }
            }
        } catch (NoSuchFileException e) {
            return null;
        } catch (NumberFormatException e) {
            throw bad(f, e.getMessage());
        } catch (IOException e) {
            throw StoreException.translate("verify-request", f.toString(), null, e);
        }
        if (version != VERSION || at < 0) {
            throw bad(f, "version " + version + ", requestedAt " + at + "; expected version " + VERSION);
        }
        return new OfflineVerifyRequest(at, by, full, Arrays.copyOf(pbns, n));
    }

    private static CorruptDataException bad(Path f, String what) {
        return new CorruptDataException("verify-request", f.toString(), null, "unreadable request (" + what + "); delete the file"
                + " and run a full verify pass instead (POST /api/v1/verify with {\"full\": true})");
    }

    /** Deletes the request in {@code root} if it is still this one (a later fsck may have written another meanwhile). */
    public void clear(Path root) {
        try {
            OfflineVerifyRequest now = read(root);
            if (now != null && now.requestedAtMillis == requestedAtMillis) {
                Files.deleteIfExists(file(root));
            }
        } catch (IOException | StoreException e) {
            System.getLogger(OfflineVerifyRequest.class.getName()).log(System.Logger.Level.WARNING,
                    "cannot remove the verify request " + file(root) + " after its pass: " + e.getMessage()
                            + "; the pass runs again at the next start unless the file is deleted");
        }
    }
}
