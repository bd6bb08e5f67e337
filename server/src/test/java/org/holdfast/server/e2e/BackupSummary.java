package org.holdfast.server.e2e;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * The agent's {@code backup --json} summary. Field lookups fail the test with the whole summary
 * when a field is missing, so a renamed field shows up as a clear failure, never as a zero.
 */
public record BackupSummary(JsonNode json, AgentResult run) {

    static BackupSummary parse(AgentResult r) {
        JsonNode n = AgentProcess.json(r);
        if (!n.isObject()) {
            throw new AssertionError("backup --json should print an object: " + r);
        }
        return new BackupSummary(n, r);
    }

    /** The committed snapshot's id, as {@code restore --snapshot} takes it. */
    public String snapshotId() {
        return field("snapshotId").asText();
    }

    /** The size of the volume this snapshot describes. */
    public long volumeBytes() {
        return number("volumeBytes");
    }

    /** Bytes the agent described in this backup (entries sent times the block size). */
    public long logicalBytes() {
        return number("logicalBytes");
    }

    /** Bytes the agent read from the source (all of it, or only the listed changed ranges). */
    public long bytesRead() {
        return number("bytesRead");
    }

    /** "incremental" or "full". */
    public String mode() {
        return field("mode").asText();
    }

    /** Blocks whose fingerprint differs from the agent's previous state (the delta). */
    public long changedBlocks() {
        return number("changedBlocks");
    }

    /** Block payloads the agent uploaded. */
    public long sentBlocks() {
        return number("sentBlocks");
    }

    /** Payload bytes the agent uploaded (compressed on the wire or not). */
    public long sentBytes() {
        return number("sentBytes");
    }

    /** Blocks the server had never seen and stored. */
    public long newBlocks() {
        return number("newBlocks");
    }

    /** Bytes the server added to its data store for this snapshot. */
    public long storedBytes() {
        return number("storedBytes");
    }

    long number(String... names) {
        JsonNode n = field(names);
        if (!n.canConvertToLong()) {
            throw new AssertionError("field " + names[0] + " is not a number in " + json);
        }
        return n.asLong();
    }

    JsonNode field(String... names) {
        for (String name : names) {
            if (json.has(name)) {
                return json.get(name);
            }
        }
        throw new AssertionError("backup summary has none of " + String.join("/", names) + ": " + json);
    }

    @Override
    public String toString() {
        return json.toString();
    }
}
