package org.holdfast.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.holdfast.client.cli.HoldfastAgent;

/** One in-process run of the agent CLI with captured output. */
public record AgentRun(int exit, String stdout, String stderr) {
    private static final ObjectMapper JSON = new ObjectMapper();

    public static AgentRun of(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = HoldfastAgent.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new AgentRun(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    public JsonNode json() {
        try {
            return JSON.readTree(stdout);
        } catch (Exception e) {
            throw new AssertionError("not JSON: " + this, e);
        }
    }

    @Override
    public String toString() {
        return "exit " + exit + "\nstdout: " + stdout + "\nstderr: " + stderr;
    }
}
