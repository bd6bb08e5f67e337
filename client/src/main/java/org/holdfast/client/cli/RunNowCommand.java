package org.holdfast.client.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import org.holdfast.client.daemon.ControlClient;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code run-now}: asks the running daemon to back up a volume now, and waits for the run's result. */
@Command(name = "run-now", mixinStandardHelpOptions = true,
        description = {"Ask the running daemon to back up VOLUME now, and wait for the result.",
            "The run comes after the run under way, if any, with the volume's hooks and retries;",
            "the exit code is the run's."})
final class RunNowCommand extends HoldfastAgent.Subcommand implements Callable<Integer> {
    @Mixin
    ControlOptions control;

    @Parameters(index = "0", arity = "0..1", paramLabel = "VOLUME", description = "The volume, as named in the daemon's config.")
    String volume;

    @Option(names = "--volume", paramLabel = "NAME", description = "The volume (same as VOLUME).")
    String volumeOption;

    @Option(names = "--no-wait", description = "Return once the daemon has queued the run.")
    boolean noWait;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        String name = volume != null ? volume : volumeOption;
        if (name == null || (volume != null && volumeOption != null && !volume.equals(volumeOption))) {
            throw new CommandLine.ParameterException(spec.commandLine(), "name one volume: run-now VOLUME");
        }
        Map<String, Object> request = new LinkedHashMap<>();
        request.put("command", "run-now");
        request.put("volume", name);
        request.put("wait", !noWait);
        JsonNode answer = ControlClient.call(control.socket(), request);
        StatusCommand.failOnError(answer);
        if (control.json) {
            new Output(out, err, true).json(answer);
        } else if (noWait) {
            out.println("volume " + name + ": run queued");
        } else {
            out.println("volume " + name + ": " + StatusCommand.describe(answer.path("run")));
        }
        JsonNode run = answer.path("run");
        if (noWait || "succeeded".equals(run.path("result").asText())) {
            return 0;
        }
        int code = run.path("exitCode").asInt(1);
        return code == 0 ? 1 : code;
    }
}
