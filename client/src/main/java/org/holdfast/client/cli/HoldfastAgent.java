package org.holdfast.client.cli;

import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.util.Arrays;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;
import org.holdfast.client.IoReasons;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The agent's entry point: {@code holdfast-agent backup | snapshots | restore}. */
@Command(name = "holdfast-agent", mixinStandardHelpOptions = true, version = "holdfast-agent 0.1.0 (protocol 2 and 3)",
        description = "Backs up block volumes (image files or block devices) to a Holdfast server and restores them.",
        subcommands = {BackupCommand.class, SnapshotsCommand.class, RestoreCommand.class,
            DaemonCommand.class, RunNowCommand.class, StatusCommand.class, ReportRunCommand.class},
        footerHeading = "%nExit codes:%n", footer = {})
public final class HoldfastAgent implements Runnable {
    /** The exit codes as the help shows them (ExitCode has the same list). */
    static final String[] EXIT_CODES = {
        "  0  success: backup committed, restore verified and written, list printed",
        "  1  internal error: rerun with --debug and report the stack trace",
        "  2  usage: bad option or argument, a bad --changed-blocks file, an",
        "     unknown server (pass --fingerprint or --ca-cert), or a restore",
        "     target that exists and is not empty (pass --force)",
        "  3  network: server unreachable, connection lost, or no answer in time",
        "  4  rejected by the server: unknown volume or snapshot, volume busy,",
        "     block size mismatch, bad token, volume over its quota",
        "  5  local I/O: cannot read the source, write the target or the state dir",
        "  6  integrity: a restored block failed verification, the server broke",
        "     the protocol, or its certificate failed verification (fingerprint",
        "     mismatch, not trusted by --ca-cert)",
        "  7  storage full: the server's disk reached its free-space reserve;",
        "     nothing was committed (free space on the server, then retry)",
        "  8  transient: the server lost a worker the backup needed (or has none);",
        "     nothing was committed: run it again (the daemon retries it)"};

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "name a subcommand: backup, snapshots, restore, daemon, run-now or status");
    }

    public static void main(String[] args) {
        if (args.length > 0 && args[0].equals(org.holdfast.client.launch.ExplodedLayout.COMMAND)) {
            System.exit(org.holdfast.client.launch.ExplodedLayout.run(args)); // the launcher's one-time set-up
        }
        StartupWarmer.start(args);
        System.exit(run(args, System.out, System.err));
    }

    /** Runs the CLI with the given streams and returns the exit code (the tests' entry point). */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        boolean debug = Arrays.asList(args).contains("--debug");
        CommandLine cl = new CommandLine(new HoldfastAgent(), new Factory(out, err));
        cl.getCommandSpec().usageMessage().footer(EXIT_CODES);
        for (CommandLine sub : cl.getSubcommands().values()) {
            sub.getCommandSpec().usageMessage().footerHeading("%nExit codes:%n").footer(EXIT_CODES);
        }
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        cl.setParameterExceptionHandler(new UsageErrorHandler(err));
        cl.setExitCodeExceptionMapper(t -> t instanceof AgentException a ? a.exitCode().code()
                : t instanceof CommandLine.ParameterException ? ExitCode.USAGE.code() : ExitCode.INTERNAL.code());
        cl.setExecutionExceptionHandler((thrown, commandLine, parseResult) -> {
            Exception e = TransientHint.named(explain(thrown), commandLine.getCommandName());
            report(e, debug, err);
            ExitCode exit = e instanceof AgentException a ? a.exitCode() : ExitCode.INTERNAL;
            if (jsonAsked(parseResult)) {
                FailureJson.print(exit, e, out);
            }
            return exit.code();
        });
        int code = cl.execute(args);
        out.flush();
        err.flush();
        return code;
    }

    /** An I/O failure no code path translated still reaches the user as its OS reason, never as a Java exception. */
    static Exception explain(Exception e) {
        Throwable t = e instanceof UncheckedIOException u ? u.getCause() : e;
        return t instanceof IOException io ? IoReasons.unexplained(io) : e;
    }

    /** Whether the command that ran was given {@code --json}. */
    private static boolean jsonAsked(CommandLine.ParseResult parsed) {
        CommandLine.ParseResult p = parsed;
        while (p.subcommand() != null) {
            p = p.subcommand();
        }
        return p.hasMatchedOption("--json");
    }

    static void report(Throwable e, boolean debug, PrintStream err) {
        if (e instanceof AgentException a) {
            String hint = a.hint() == null ? "" : " (" + a.hint() + ")";
            err.println("holdfast-agent: error: " + a.getMessage() + hint);
        } else {
            err.println("holdfast-agent: internal error: " + e + " (rerun with --debug and report the stack trace)");
        }
        if (debug) {
            e.printStackTrace(err);
        }
        err.flush();
    }

    /** Gives subcommands the output streams. */
    private static final class Factory implements CommandLine.IFactory {
        private final PrintStream out;
        private final PrintStream err;
        private final CommandLine.IFactory fallback = CommandLine.defaultFactory();

        Factory(PrintStream out, PrintStream err) {
            this.out = out;
            this.err = err;
        }

        @Override
        public <K> K create(Class<K> cls) throws Exception {
            K k = fallback.create(cls);
            if (k instanceof Subcommand s) {
                s.streams(out, err);
            }
            return k;
        }
    }

    /** A subcommand that prints to the CLI's streams. */
    abstract static class Subcommand {
        PrintStream out = System.out;
        PrintStream err = System.err;

        void streams(PrintStream out, PrintStream err) {
            this.out = out;
            this.err = err;
        }
    }
}
