package org.holdfast.bench.runner;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;

/**
 * Reads the agent's {@code --json} output: the whole of stdout, or else its last line that
 * parses as JSON. Field lookups try a few names, so that a renamed field degrades to "unknown"
 * (-1) in the report rather than to a wrong number.
 */
final class AgentJson {
    private static final ObjectMapper JSON = new ObjectMapper();

    private AgentJson() {
    }

    static JsonNode parse(String stdout) throws IOException {
        String out = stdout.strip();
        try {
            return JSON.readTree(out);
        } catch (IOException whole) {
            String[] lines = out.split("\\R");
            for (int i = lines.length - 1; i >= 0; i--) {
                String l = lines[i].strip();
                if (l.startsWith("{") || l.startsWith("[")) {
                    try {
                        return JSON.readTree(l);
                    } catch (IOException ignored) {
                        // try an earlier line
                    }
                }
            }
            throw new IOException("agent printed no JSON: " + out.substring(0, Math.min(500, out.length())));
        }
    }

    /** The first of the named fields that is a number, or -1. */
    static long number(JsonNode n, String... names) {
        for (String name : names) {
            JsonNode v = n.get(name);
            if (v != null && v.canConvertToLong()) {
                return v.asLong();
            }
        }
        return -1;
    }

    /** The first of the named fields as text, or null. */
    static String text(JsonNode n, String... names) {
        for (String name : names) {
            JsonNode v = n.get(name);
            if (v != null && !v.isNull()) {
                return v.asText();
            }
        }
        return null;
    }
}
