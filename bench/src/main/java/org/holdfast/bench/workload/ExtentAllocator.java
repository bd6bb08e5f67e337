package org.holdfast.bench.workload;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * First-fit block allocator of a simulated file system: files take the lowest free runs, so a
 * deleted file's blocks are reused by later files, as on a real disk (the old bytes stay until
 * overwritten).
 */
public final class ExtentAllocator {
    private final TreeMap<Long, Long> free = new TreeMap<>();
    private long freeBlocks;

    /** An allocator over blocks {@code [first, first + count)}, all free. */
    public ExtentAllocator(long first, long count) {
        if (count > 0) {
            free.put(first, count);
            freeBlocks = count;
        }
    }

    /** Blocks not allocated. */
    public long freeBlocks() {
        return freeBlocks;
    }

    /** Takes {@code blocks} blocks in as few first-fit runs as needed, or none if they do not fit. */
    public List<Extent> allocate(long blocks) {
        if (blocks <= 0 || blocks > freeBlocks) {
            return List.of();
        }
        List<Extent> out = new ArrayList<>();
        // Prefer one run that holds the whole file, as allocators try to avoid fragmentation.
        for (Map.Entry<Long, Long> e : free.entrySet()) {
            if (e.getValue() >= blocks) {
                take(e.getKey(), blocks, out);
                return out;
            }
        }
        long left = blocks;
        while (left > 0) {
            Map.Entry<Long, Long> e = free.firstEntry();
            long n = Math.min(left, e.getValue());
            take(e.getKey(), n, out);
            left -= n;
        }
        return out;
    }

    private void take(long start, long n, List<Extent> out) {
        long len = free.remove(start);
        if (len > n) {
            free.put(start + n, len - n);
        }
        freeBlocks -= n;
        out.add(new Extent(start, n));
    }

    /** Returns runs to the free pool, merging neighbours. */
    public void release(List<Extent> extents) {
        for (Extent x : extents) {
            long start = x.start();
            long len = x.length();
            Map.Entry<Long, Long> before = free.floorEntry(start);
            if (before != null && before.getKey() + before.getValue() > start) {
                throw new IllegalStateException("double free of block " + start);
            }
            if (before != null && before.getKey() + before.getValue() == start) {
                start = before.getKey();
                len += before.getValue();
                free.remove(before.getKey());
            }
            Long after = free.get(x.end());
            if (after != null) {
                free.remove(x.end());
                len += after;
            }
            free.put(start, len);
            freeBlocks += x.length();
        }
    }
}
