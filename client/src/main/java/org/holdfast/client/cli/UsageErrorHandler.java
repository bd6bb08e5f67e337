package org.holdfast.client.cli;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.holdfast.client.ExitCode;
import org.holdfast.common.text.EditDistance;
import picocli.CommandLine;

/**
 * Reports a refused command line as one error line that names what was wrong (a misspelt option
 * first, with the option it most likely meant) and where the options are listed, instead of
 * picocli's full usage text, whose hundred lines pushed the one line that mattered off the screen.
 */
final class UsageErrorHandler implements CommandLine.IParameterExceptionHandler {
    private final PrintStream err;

    UsageErrorHandler(PrintStream err) {
        this.err = err;
    }

    @Override
    public int handleParseException(CommandLine.ParameterException ex, String[] args) {
        CommandLine.Model.CommandSpec spec = ex.getCommandLine().getCommandSpec();
        List<String> unknown = unknownOptions(spec, args);
        StringBuilder what = new StringBuilder();
        List<String> meant = new ArrayList<>();
        for (String name : unknown) {
            what.append(what.isEmpty() ? "" : ", ").append('\'').append(name).append('\'');
            String near = nearestOption(spec, name);
            if (near != null) {
                meant.add(near);
            }
        }
        String message;
        if (unknown.isEmpty()) {
            message = ex.getMessage();
        } else {
            message = (unknown.size() == 1 ? "unknown option " : "unknown options ") + what
                    // picocli names a missing option before a misspelt one; the misspelling is the cause
                    + (ex instanceof CommandLine.UnmatchedArgumentException ? "" : "; " + ex.getMessage());
        }
        if (unknown.isEmpty() && ex instanceof CommandLine.UnmatchedArgumentException u) {
            meant.addAll(u.getSuggestions()); // a misspelt subcommand
        }
        String hint = (meant.isEmpty() ? "" : "did you mean " + String.join(", ", meant) + "? ")
                + "run '" + spec.qualifiedName() + " --help' for the options";
        err.println("holdfast-agent: error: " + message + " (" + hint + ")");
        err.flush();
        return ExitCode.USAGE.code();
    }

    /**
     * The arguments after the subcommand's name that look like options ({@code --name} or
     * {@code --name=value}) it does not have; none for the top-level command (picocli names those).
     */
    private static List<String> unknownOptions(CommandLine.Model.CommandSpec spec, String[] args) {
        List<String> unknown = new ArrayList<>();
        int start = spec.parent() == null ? args.length : Arrays.asList(args).indexOf(spec.name()) + 1;
        if (start == 0) {
            return unknown; // not found: leave it to picocli's message
        }
        for (int i = start; i < args.length; i++) {
            String arg = args[i];
            if (arg.equals("--")) {
                break; // what follows is positional
            }
            if (!arg.startsWith("--") || arg.length() == 2) {
                continue;
            }
            String name = arg.contains("=") ? arg.substring(0, arg.indexOf('=')) : arg;
            if (spec.findOption(name) == null && !unknown.contains(name)) {
                unknown.add(name);
            }
        }
        return unknown;
    }

    /** The command's option within two edits of {@code name}, the closest first found; null if none. */
    private static String nearestOption(CommandLine.Model.CommandSpec spec, String name) {
        String best = null;
        int bestDistance = 3;
        for (CommandLine.Model.OptionSpec option : spec.options()) {
            for (String candidate : option.names()) {
                int d = EditDistance.levenshtein(name, candidate);
                if (d < bestDistance) {
                    bestDistance = d;
                    best = candidate;
                }
            }
        }
        return best;
    }
}
