package org.holdfast.client.scan;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;
import org.holdfast.client.IoReasons;
import org.holdfast.common.protocol.ProtocolLimits;

/**
 * The ranges of a volume that an outside source (a change-tracking driver, a thin-snapshot diff)
 * says may have changed since the last backup, as sorted, merged LBN extents.
 *
 * <p>File format: one range per line, {@code START_BYTE LENGTH} in bytes (decimal, separated by
 * spaces or tabs); blank lines and text after {@code #} are ignored. Ranges may overlap and come in
 * any order; each is widened to whole blocks. A range must lie inside the volume.
 */
public final class ChangedBlockList {
    private final long[] starts;
    private final long[] ends;
    private final long blocks;

    private ChangedBlockList(long[] starts, long[] ends) {
        this.starts = starts;
        this.ends = ends;
        long n = 0;
        for (int i = 0; i < starts.length; i++) {
            n += ends[i] - starts[i];
        }
        this.blocks = n;
    }

    /** Reads and validates {@code file}; any problem is a usage error naming the line. */
    public static ChangedBlockList read(Path file, long volumeBytes, int blockSize) {
        try (BufferedReader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            return parse(r, file.toString(), volumeBytes, blockSize);
        } catch (NoSuchFileException e) {
            throw new AgentException(ExitCode.USAGE, "changed-blocks file " + file + " does not exist", "check --changed-blocks");
        } catch (IOException e) {
            throw IoReasons.localIo("cannot read changed-blocks file", file, e, "check --changed-blocks");
        }
    }

    static ChangedBlockList parse(BufferedReader r, String name, long volumeBytes, int blockSize) throws IOException {
        if (!ProtocolLimits.isValidBlockSize(blockSize)) {
            throw new IllegalArgumentException("block size " + blockSize);
        }
        List<long[]> ranges = new ArrayList<>();
        String line;
        int lineNo = 0;
        while ((line = r.readLine()) != null) {
            lineNo++;
            int hash = line.indexOf('#');
            String t = (hash >= 0 ? line.substring(0, hash) : line).strip();
            if (t.isEmpty()) {
                continue;
            }
            String[] parts = t.split("[ \t]+");
            if (parts.length != 2) {
                throw bad(name, lineNo, "expected 'START_BYTE LENGTH', got '" + t + "'");
            }
            long start;
            long length;
            try {
                start = Long.parseLong(parts[0]);
                length = Long.parseLong(parts[1]);
            } catch (NumberFormatException e) {
                throw bad(name, lineNo, "not a decimal byte offset and length: '" + t + "'");
            }
            if (start < 0 || length <= 0) {
                throw bad(name, lineNo, "start must be >= 0 and length > 0");
            }
            if (start > volumeBytes || length > volumeBytes - start) {
                throw bad(name, lineNo, "range " + start + "+" + length + " ends beyond the volume (" + volumeBytes + " bytes)");
            }
            long first = start / blockSize;
            long end = (start + length + blockSize - 1) / blockSize;
            ranges.add(new long[] {first, end});
        }
        return merged(ranges);
    }

    /**
     * The extents covering byte ranges {@code {start, length}} (any order, may overlap), widened to
     * whole blocks: what a change tracker such as a qcow2 dirty bitmap reports.
     */
    public static ChangedBlockList ofByteRanges(List<long[]> byteRanges, long volumeBytes, int blockSize) {
        List<long[]> ranges = new ArrayList<>(byteRanges.size());
        for (long[] r : byteRanges) {
            if (r[0] < 0 || r[1] <= 0 || r[0] > volumeBytes || r[1] > volumeBytes - r[0]) {
                throw new IllegalArgumentException("range " + r[0] + "+" + r[1] + " outside a volume of " + volumeBytes + " bytes");
            }
            ranges.add(new long[] {r[0] / blockSize, (r[0] + r[1] + blockSize - 1) / blockSize});
        }
        return merged(ranges);
    }

    private static ChangedBlockList merged(List<long[]> ranges) {
        ranges.sort((a, b) -> Long.compare(a[0], b[0]));
        List<long[]> merged = new ArrayList<>();
        for (long[] x : ranges) {
            long[] last = merged.isEmpty() ? null : merged.get(merged.size() - 1);
            if (last != null && x[0] <= last[1]) {
                last[1] = Math.max(last[1], x[1]);
            } else {
                merged.add(x.clone());
            }
        }
        long[] s = new long[merged.size()];
        long[] e = new long[merged.size()];
        for (int i = 0; i < s.length; i++) {
            s[i] = merged.get(i)[0];
            e[i] = merged.get(i)[1];
        }
        return new ChangedBlockList(s, e);
    }

    private static AgentException bad(String name, int line, String what) {
        return new AgentException(ExitCode.USAGE, "changed-blocks file " + name + " line " + line + ": " + what,
                "fix the file (one 'START_BYTE LENGTH' per line, in bytes) or omit --changed-blocks");
    }

    /** A list covering the whole volume. */
    public static ChangedBlockList all(long blockCount) {
        return blockCount == 0 ? new ChangedBlockList(new long[0], new long[0])
                : new ChangedBlockList(new long[] {0}, new long[] {blockCount});
    }

    /** Number of extents. */
    public int extents() {
        return starts.length;
    }

    /** First LBN of extent {@code i}. */
    public long start(int i) {
        return starts[i];
    }

    /** One past the last LBN of extent {@code i}. */
    public long end(int i) {
        return ends[i];
    }

    /** Blocks covered by all extents. */
    public long blocks() {
        return blocks;
    }
}
