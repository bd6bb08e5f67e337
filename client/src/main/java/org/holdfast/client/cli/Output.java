package org.holdfast.client.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.PrintStream;
import org.holdfast.client.progress.ProgressMeter;

/** Where a subcommand writes: results to stdout (text or one JSON document), remarks and progress to stderr. */
final class Output {
    private static final ObjectMapper JSON = new ObjectMapper().disable(SerializationFeature.INDENT_OUTPUT);

    final PrintStream out;
    final PrintStream err;
    final boolean json;

    Output(PrintStream out, PrintStream err, boolean json) {
        this.out = out;
        this.err = err;
        this.json = json;
    }

    /** A progress meter that draws only on an interactive terminal and never with --json. */
    ProgressMeter progress(String label) {
        boolean tty = System.console() != null && !"never".equals(System.getenv("HOLDFAST_PROGRESS"));
        return new ProgressMeter(err, tty && !json, label);
    }

    void notice(String line) {
        err.println("holdfast-agent: " + line);
    }

    /** Builds the mapper's serializers for the summaries (a map of names to numbers and text) ahead of use. */
    static void warm() {
        try {
            JSON.writeValueAsString(java.util.Map.of("warm", 1, "up", "x"));
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    void json(Object value) {
        try {
            out.println(JSON.writeValueAsString(value));
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
        out.flush();
    }
}
