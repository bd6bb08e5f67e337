package org.holdfast.server.e2e;

import com.fasterxml.jackson.databind.JsonNode;

/** One entry of the agent's {@code snapshots --json} list. */
public record SnapshotInfo(String id, long volumeBytes, JsonNode json) {

    static SnapshotInfo of(JsonNode n) {
        JsonNode id = first(n, "id");
        JsonNode bytes = first(n, "volumeBytes");
        return new SnapshotInfo(id.asText(), bytes.asLong(), n);
    }

    private static JsonNode first(JsonNode n, String... names) {
        for (String name : names) {
            if (n.has(name)) {
                return n.get(name);
            }
        }
        throw new AssertionError("snapshot entry has none of " + String.join("/", names) + ": " + n);
    }
}
