package org.holdfast.client.qcow2;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The dirty extents of a bitmap, as the NBD server reports them in the {@code qemu:dirty-bitmap:NAME}
 * metadata context; read with libnbd's {@code nbdinfo --map}, whose type bit 1 marks "dirty".
 */
final class DirtyMap {
    private static final ObjectMapper JSON = new ObjectMapper();

    private DirtyMap() {
    }

    /** The dirty byte ranges {@code {offset, length}} of bitmap {@code bitmap} exported on {@code socket}. */
    static List<long[]> dirtyRanges(Path socket, String bitmap) throws IOException {
        String uri = "nbd+unix:///?socket=" + socket;
        JsonNode map = JSON.readTree(Tool.run(List.of("nbdinfo", "--map=qemu:dirty-bitmap:" + bitmap, "--json", uri)));
        if (!map.isArray()) {
            throw new IOException("nbdinfo --map did not answer a list of extents");
        }
        List<long[]> dirty = new ArrayList<>();
        for (JsonNode e : map) {
            if ((e.path("type").asInt() & 1) != 0 && e.path("length").asLong() > 0) {
                dirty.add(new long[] {e.path("offset").asLong(), e.path("length").asLong()});
            }
        }
        return dirty;
    }
}
