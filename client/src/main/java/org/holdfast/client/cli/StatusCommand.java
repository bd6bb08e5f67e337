package org.holdfast.client.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;
import org.holdfast.client.daemon.ControlClient;
import org.holdfast.client.progress.Sizes;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code status}: the running daemon's volumes, each with its last and next run. */
@Command(name = "status", mixinStandardHelpOptions = true,
        description = "Show the running daemon's volumes: schedule, next run, a run under way, and the last run's result.")
final class StatusCommand extends HoldfastAgent.Subcommand implements Callable<Integer> {
    @Mixin
    ControlOptions control;

    @Override
    public Integer call() {
        JsonNode answer = ControlClient.call(control.socket(), Map.of("command", "status"));
        failOnError(answer);
        if (control.json) {
            new Output(out, err, true).json(answer);
            return 0;
        }
        JsonNode d = answer.path("daemon");
        out.printf(Locale.ROOT, "holdfast-agent daemon %s, pid %d, up since %s, server %s%n", d.path("version").asText(),
                d.path("pid").asLong(), d.path("since").asText(), d.path("server").asText());
        for (JsonNode v : answer.path("volumes")) {
            out.printf(Locale.ROOT, "%n%s  (%s)  schedule '%s'  next run %s%n", v.path("name").asText(), v.path("source").asText(),
                    v.path("schedule").asText(), v.path("next").asText("never"));
            JsonNode running = v.path("running");
            if (running.isObject()) {
                out.printf(Locale.ROOT, "  running since %s (%s), try %d%s%n", running.path("since").asText(),
                        running.path("trigger").asText(), running.path("attempt").asInt(),
                        running.path("lastError").isTextual() ? ", last error: " + running.path("lastError").asText() : "");
            }
            JsonNode last = v.path("last");
            out.println(last.isObject() ? "  last run: " + describe(last) : "  last run: none yet");
        }
        return 0;
    }

    /**
     * One line for a run record: result, times, message, bytes. Scanned bytes include holes and are not
     * read, so the bytes read are said apart, as the backup's own summary does (a record from before
     * sourceBytesRead existed shows scanned bytes only).
     */
    static String describe(JsonNode r) {
        JsonNode read = r.path("sourceBytesRead");
        return String.format(Locale.ROOT, "%s, %s to %s, %s, scanned %s%s, sent %s",
                r.path("result").asText(), r.path("start").asText(), r.path("end").asText(), r.path("message").asText(),
                Sizes.format(r.path("bytesRead").asLong()), read.isNumber() ? " (read " + Sizes.format(read.asLong()) + ")" : "",
                Sizes.format(r.path("bytesSent").asLong()));
    }

    /** An answer with {@code ok: false} becomes the CLI's error. */
    static void failOnError(JsonNode answer) {
        if (!answer.path("ok").asBoolean(false)) {
            throw new AgentException(ExitCode.USAGE, "the agent daemon refused: " + answer.path("error").asText("no reason given"),
                    answer.path("hint").isTextual() ? answer.path("hint").asText() : null);
        }
    }
}
