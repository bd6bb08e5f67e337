package org.holdfast.client.qcow2;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Extents of an NBD export as {@code nbdinfo --map} (libnbd) reads them from a metadata context:
 * the dirty ranges of a bitmap ({@code qemu:dirty-bitmap:NAME}, type bit 1 "dirty") and the ranges
 * that may hold data ({@code base:allocation}, type bit 2 "zero" clear).
 */
final class ExtentMap {
    private static final ObjectMapper JSON = new ObjectMapper();

    private ExtentMap() {
    }

    /** The dirty byte ranges {@code {offset, length}} of bitmap {@code bitmap} exported on {@code socket}. */
    static List<long[]> dirtyRanges(Path socket, String bitmap) throws IOException {
        return ranges(socket, "qemu:dirty-bitmap:" + bitmap, 1, true);
    }

    /**
     * The ranges that may hold data, in order: all but those {@code base:allocation} flags as reading
     * zeros (type bit 2), which a full read may skip.
     */
    static List<long[]> dataRanges(Path socket) throws IOException {
        return ranges(socket, "base:allocation", 2, false);
    }

    /** The extents of {@code context} whose type has {@code bit} set ({@code set}) or clear. */
    private static List<long[]> ranges(Path socket, String context, int bit, boolean set) throws IOException {
        String uri = "nbd+unix:///?socket=" + socket;
        JsonNode map = JSON.readTree(Tool.run(List.of("nbdinfo", "--map=" + context, "--json", uri)));
        if (!map.isArray()) {
            throw new IOException("nbdinfo --map=" + context + " did not answer a list of extents");
        }
        List<long[]> out = new ArrayList<>();
        for (JsonNode e : map) {
            long offset = e.path("offset").asLong();
            long length = e.path("length").asLong();
            if (((e.path("type").asInt() & bit) != 0) == set && length > 0) {
                long[] last = out.isEmpty() ? null : out.get(out.size() - 1);
                if (last != null && last[0] + last[1] == offset) {
                    last[1] += length; // adjacent extents of the same kind: one range
                } else {
                    out.add(new long[] {offset, length});
                }
            }
        }
        return out;
    }
}
