package org.holdfast.server.catalog;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * One sorted run on disk: fixed-width records of big-endian longs, appended in order and read back
 * sequentially ({@link SessionMap}, {@link SnapshotDelta}). The file is created on the first
 * append and deleted by {@link #close()}; what a crash leaves is removed by the directory's owner.
 */
final class SpillRun implements AutoCloseable {
    private static final int IO_BYTES = 64 * 1024;

    private final Path file;
    private final int recordBytes;
    private final String what;
    private FileChannel out;
    private ByteBuffer io;
    private long records;

    /** A run of records of {@code longs} longs in {@code file}; {@code what} names it in errors. */
    SpillRun(Path file, int longs, String what) {
        this.file = file;
        this.recordBytes = longs * 8;
        this.what = what;
    }

    Path file() {
        return file;
    }

    /** Records appended so far (every one is in the file: appends drain completely). */
    long records() {
        return records;
    }

    /** Appends {@code n} records: record i is {@code columns[0][i], columns[1][i], ...}. */
    void append(long[][] columns, int n) {
        try {
            if (out == null) {
                out = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
                io = ByteBuffer.allocate(IO_BYTES);
            }
            for (int i = 0; i < n; i++) {
                if (io.remaining() < recordBytes) {
                    drain();
                }
                for (long[] c : columns) {
                    io.putLong(c[i]);
                }
            }
            drain();
        } catch (IOException e) {
            throw new UncheckedIOException("could not spill " + what + " to " + file + ": " + e.getMessage()
                    + "; check free space and permissions there", e);
        }
        records += n;
    }

    private void drain() throws IOException {
        io.flip();
        while (io.hasRemaining()) {
            out.write(io);
        }
        io.clear();
    }

    /** A reader of the records appended so far. */
    Reader reader() {
        return new Reader(records);
    }

    /** Closes and deletes the file. */
    @Override
    public void close() {
        try {
            if (out != null) {
                out.close();
            }
            Files.deleteIfExists(file);
        } catch (IOException e) {
            throw new UncheckedIOException("could not delete the spill file of " + what + " " + file + ": " + e.getMessage(), e);
        }
    }

    /** Reads the run's records in order. */
    final class Reader implements AutoCloseable {
        private final ByteBuffer in;
        private FileChannel channel;
        private long left;

        private Reader(long records) {
            this.left = records;
            this.in = records == 0 ? null : ByteBuffer.allocate(IO_BYTES);
            if (in != null) {
                in.limit(0);
            }
        }

        /** Reads the next record into {@code record}; false past the last. */
        boolean next(long[] record) {
            if (left == 0) {
                return false;
            }
            try {
                if (channel == null) {
                    channel = FileChannel.open(file, StandardOpenOption.READ);
                }
                if (in.remaining() < recordBytes) {
                    in.compact();
                    while (in.position() < recordBytes) {
                        if (channel.read(in) < 0) {
                            throw new IOException("spill file ends early");
                        }
                    }
                    in.flip();
                }
            } catch (IOException e) {
                throw new UncheckedIOException("could not read the spill file of " + what + " " + file + ": " + e.getMessage(), e);
            }
            for (int i = 0; i < record.length; i++) {
                record[i] = in.getLong();
            }
            left--;
            return true;
        }

        @Override
        public void close() {
            if (channel != null) {
                try {
                    channel.close();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }
    }
}
