package org.holdfast.client.cli;

import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.Map;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;

/**
 * The one JSON document a command given {@code --json} prints on stdout when it fails, so a script
 * reads the kind of failure (retry on {@code transient} or {@code network}) without parsing stderr:
 * {@code {"ok":false,"exitCode":8,"error":"transient","message":"...","hint":"..."}}.
 */
final class FailureJson {
    private FailureJson() {
    }

    static void print(ExitCode exit, Exception e, PrintStream out) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("ok", false);
        m.put("exitCode", exit.code());
        m.put("error", exit.jsonName());
        m.put("message", e instanceof AgentException ? e.getMessage() : "internal error: " + e);
        if (e instanceof AgentException a && a.hint() != null) {
            m.put("hint", a.hint());
        }
        new Output(out, null, true).json(m);
    }
}
