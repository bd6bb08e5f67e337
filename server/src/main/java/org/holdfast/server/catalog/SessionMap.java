package org.holdfast.server.catalog;

import java.nio.file.Path;

/**
 * The LBN → PBN entries one backup session asks its snapshot to have, in strictly increasing LBN
 * order. Only LBNs the session saw are in it; {@link SnapshotCommit} compares them with the
 * parent and writes only those that changed.
 *
 * <p>Memory is bounded: at most {@code bufferEntries} entries are held in parallel arrays; when
 * they are full they are appended to a spill file (16 bytes an entry: LBN, PBN, big-endian). As
 * entries arrive in LBN order, the file is one sorted run and the buffer its tail, so reading back
 * ({@link #cursor()}) is a sequential scan with no merge. {@link #close()} deletes the file; a
 * file left by a crash is removed by whoever owns the directory ({@code SessionSpill} at start).
 */
public final class SessionMap implements AutoCloseable {
    /** Bytes of one spilled entry. */
    public static final int ENTRY_BYTES = 16;

    private final Path spillFile;
    private final SpillRun run;
    private final int bufferEntries;
    private long[] lbn;
    private long[] pbn;
    private int buffered;
    private long spilled;
    private long lastLbn = -1;
    private boolean closed;

    /** A map held wholly in memory (tests, small sessions): the arrays grow as needed. */
    public SessionMap(int initialCapacity) {
        this(null, Integer.MAX_VALUE, Math.max(16, initialCapacity));
    }

    /** A map holding at most {@code bufferEntries} entries in memory and the rest in {@code spillFile} (created on first spill). */
    public SessionMap(Path spillFile, int bufferEntries) {
        this(spillFile, bufferEntries, Math.min(bufferEntries, 1024));
        if (spillFile == null || bufferEntries < 1) {
            throw new IllegalArgumentException("a spilling session map needs a file and a buffer of at least one entry");
        }
    }

    private SessionMap(Path spillFile, int bufferEntries, int initialCapacity) {
        this.spillFile = spillFile;
        this.run = spillFile == null ? null : new SpillRun(spillFile, 2, "session entries");
        this.bufferEntries = bufferEntries;
        lbn = new long[initialCapacity];
        pbn = new long[initialCapacity];
    }

    /** Appends an entry; {@code lbn} must exceed the previous one. */
    public void add(long lbn, long pbn) {
        if (closed) {
            throw new IllegalStateException("session map is closed");
        }
        if (lbn <= lastLbn) {
            throw new IllegalArgumentException("session LBNs must increase: " + lbn + " after " + lastLbn);
        }
        if (pbn < 0) {
            throw new IllegalArgumentException("negative PBN " + pbn);
        }
        if (buffered == bufferEntries) {
            spill();
        }
        if (buffered == this.lbn.length) {
            int c = (int) Math.min((long) bufferEntries, buffered * 2L);
            this.lbn = java.util.Arrays.copyOf(this.lbn, c);
            this.pbn = java.util.Arrays.copyOf(this.pbn, c);
        }
        this.lbn[buffered] = lbn;
        this.pbn[buffered] = pbn;
        buffered++;
        lastLbn = lbn;
    }

    /** Entries added so far. */
    public long size() {
        return spilled + buffered;
    }

    /** Entries written to the spill file so far. */
    public long spilledEntries() {
        return spilled;
    }

    /** At most this many entries are held in memory (Integer.MAX_VALUE for an in-memory map). */
    public int bufferEntries() {
        return bufferEntries;
    }

    /** The spill file (which may not exist yet), or null for an in-memory map. */
    public Path spillFile() {
        return spillFile;
    }

    /** A fresh reader of every entry in LBN order. The map must not change while it is used. */
    public Cursor cursor() {
        if (closed) {
            throw new IllegalStateException("session map is closed");
        }
        return new Cursor(); // spill() drains completely, so the file already holds every spilled entry
    }

    private void spill() {
        run.append(new long[][] {lbn, pbn}, buffered);
        spilled += buffered;
        buffered = 0;
    }

    /** Deletes the spill file. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (run != null) {
            run.close();
        }
    }

    /** Reads the entries in LBN order: first the spill file, then the in-memory tail. */
    public final class Cursor implements AutoCloseable {
        private final SpillRun.Reader file = spilled == 0 ? null : run.reader();
        private final long[] record = new long[2];
        private int tail = -1;
        private long curLbn;
        private long curPbn;

        private Cursor() {
        }

        /** Moves to the next entry; false past the last. */
        public boolean next() {
            if (file != null && file.next(record)) {
                curLbn = record[0];
                curPbn = record[1];
                return true;
            }
            if (tail + 1 < buffered) {
                tail++;
                curLbn = lbn[tail];
                curPbn = pbn[tail];
                return true;
            }
            return false;
        }

        public long lbn() {
            return curLbn;
        }

        public long pbn() {
            return curPbn;
        }

        @Override
        public void close() {
            if (file != null) {
                file.close();
            }
        }
    }
}
