package org.holdfast.server.catalog;

import java.nio.file.Path;
import java.util.AbstractList;
import java.util.Arrays;
import java.util.List;
import org.holdfast.common.model.DeltaEntry;

/**
 * The delta of one snapshot in LBN order: entry i moved LBN {@code lbn} from {@code beforePbn}
 * (mapped since {@code beforeBirthSequence}, 0 if never mapped) to {@code newPbn}. Read it with a
 * {@link #cursor()}, or, while it is wholly in memory, as {@link #asList()} of {@link DeltaEntry}.
 *
 * <p>Memory is bounded for a spilling delta ({@link #SnapshotDelta(Path, int)}): at most
 * {@code bufferEntries} entries are held in parallel arrays; when they are full they are appended
 * to the spill file (32 bytes an entry: LBN, before PBN, birth, new PBN, big-endian), so a commit
 * of any size costs the heap the same. The file is one sorted run and the buffer its tail.
 * {@link #close()} deletes it; a file left by a crash is removed by whoever owns the directory (the
 * session spill directory at start).
 */
public final class SnapshotDelta implements AutoCloseable {
    /** Bytes of one spilled entry. */
    public static final int ENTRY_BYTES = 32;

    private final SpillRun run;
    private final int bufferEntries;
    private long[] lbn;
    private long[] before;
    private long[] birth;
    private long[] after;
    private int size;
    private long spilled;
    private boolean closed;

    /** A delta held wholly in memory: the arrays grow as needed. */
    public SnapshotDelta(int initialCapacity) {
        this(null, Integer.MAX_VALUE, Math.max(16, initialCapacity));
    }

    /** A delta holding at most {@code bufferEntries} entries in memory and the rest in {@code spillFile} (created on first spill). */
    public SnapshotDelta(Path spillFile, int bufferEntries) {
        this(spillFile, bufferEntries, Math.min(bufferEntries, 1024));
        if (spillFile == null || bufferEntries < 1) {
            throw new IllegalArgumentException("a spilling delta needs a file and a buffer of at least one entry");
        }
    }

    private SnapshotDelta(Path spillFile, int bufferEntries, int initialCapacity) {
        this.run = spillFile == null ? null : new SpillRun(spillFile, 4, "the commit's delta");
        this.bufferEntries = bufferEntries;
        lbn = new long[initialCapacity];
        before = new long[initialCapacity];
        birth = new long[initialCapacity];
        after = new long[initialCapacity];
    }

    /** Appends an entry; LBNs must come in increasing order. */
    public void add(long lbn, long beforePbn, long beforeBirthSequence, long newPbn) {
        if (closed) {
            throw new IllegalStateException("delta is closed");
        }
        if (size > 0 && lbn <= this.lbn[size - 1]) {
            throw new IllegalArgumentException("delta LBNs must increase: " + lbn + " after " + this.lbn[size - 1]);
        }
        if (size == bufferEntries) {
            spill();
        }
        if (size == this.lbn.length) {
            int c = (int) Math.min((long) bufferEntries, size * 2L);
            this.lbn = Arrays.copyOf(this.lbn, c);
            before = Arrays.copyOf(before, c);
            birth = Arrays.copyOf(birth, c);
            after = Arrays.copyOf(after, c);
        }
        this.lbn[size] = lbn;
        before[size] = beforePbn;
        birth[size] = beforeBirthSequence;
        after[size] = newPbn;
        size++;
    }

    /** Empties an in-memory delta for reuse (a slice buffer). */
    public void clear() {
        if (spilled > 0) {
            throw new IllegalStateException("a spilled delta cannot be cleared");
        }
        size = 0;
    }

    /** Entries added so far. */
    public long size() {
        return spilled + size;
    }

    /** Entries written to the spill file so far. */
    public long spilledEntries() {
        return spilled;
    }

    /** A read-only list view that creates each {@link DeltaEntry} on access; only for a delta that never spilled. */
    public List<DeltaEntry> asList() {
        if (spilled > 0) {
            throw new IllegalStateException("the delta spilled " + spilled + " entries to " + run.file() + ": read it with cursor()");
        }
        return new AbstractList<>() {
            @Override
            public DeltaEntry get(int i) {
                if (i < 0 || i >= size) {
                    throw new IndexOutOfBoundsException(i);
                }
                return new DeltaEntry(lbn[i], before[i], birth[i], after[i]);
            }

            @Override
            public int size() {
                return size;
            }
        };
    }

    /** A fresh reader of every entry in LBN order. The delta must not change while it is used. */
    public Cursor cursor() {
        if (closed) {
            throw new IllegalStateException("delta is closed");
        }
        return new Cursor();
    }

    private void spill() {
        run.append(new long[][] {lbn, before, birth, after}, size);
        spilled += size;
        size = 0;
    }

    /** Deletes the spill file, if any. Idempotent; an in-memory delta stays readable. */
    @Override
    public void close() {
        if (closed || run == null) {
            return;
        }
        closed = true;
        run.close();
    }

    /** Reads the entries in LBN order: first the spill file, then the in-memory tail. */
    public final class Cursor implements AutoCloseable {
        private final SpillRun.Reader file = spilled == 0 ? null : run.reader();
        private final long[] record = new long[4];
        private int tail = -1;
        private long curLbn;
        private long curBefore;
        private long curBirth;
        private long curAfter;

        private Cursor() {
        }

        /** Moves to the next entry; false past the last. */
        public boolean next() {
            if (file != null && file.next(record)) {
                curLbn = record[0];
                curBefore = record[1];
                curBirth = record[2];
                curAfter = record[3];
                return true;
            }
            if (tail + 1 < size) {
                tail++;
                curLbn = lbn[tail];
                curBefore = before[tail];
                curBirth = birth[tail];
                curAfter = after[tail];
                return true;
            }
            return false;
        }

        public long lbn() {
            return curLbn;
        }

        public long beforePbn() {
            return curBefore;
        }

        public long beforeBirthSequence() {
            return curBirth;
        }

        public long newPbn() {
            return curAfter;
        }

        @Override
        public void close() {
            if (file != null) {
                file.close();
            }
        }
    }
}
