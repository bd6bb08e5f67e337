package org.holdfast.server.app;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;

/**
 * The server's command line, parsed by picocli: {@code start} (the appliance; also when the first
 * argument is a {@code --name=value} setting or there is none) and the offline tools, one command
 * class each. {@code holdfast-server COMMAND --help} prints a command's usage; a bad option is one
 * line naming it and the command's usage exit code. The launcher (server/bin/holdfast-server) prints
 * the same {@link #USAGE}; a test holds the two equal.
 */
@Command(name = "holdfast-server")
public final class ServerCli implements Callable<Integer> {
    static final String USAGE = """
            usage: holdfast-server [start] [--holdfast.data-dir=DIR] [--server.port=8080] [--NAME=VALUE ...]
                     runs the appliance (default data directory ./holdfast-data); settings: docs/operations.md
                   holdfast-server gc-rebuild --data-dir DIR [--grace 24h] [--json]
                     offline, server stopped: rebuilds DIR/gc from the catalog
                   holdfast-server gc-rebuild --data-dir DIR --worker N --out FILE [--json]
                     offline, master stopped (data on workers): writes worker N's GC counts to FILE
                   holdfast-server worker-gc-import --data-dir DIR --file FILE [--grace 24h] [--json]
                     offline, worker stopped: rebuilds DIR/range-data/gc from FILE
                   holdfast-server worker-fsck --data-dir DIR --counts FILE [--scratch-dir DIR] [--json]
                     offline, worker stopped: checks DIR/range-data against FILE, writing nothing in DIR
                   holdfast-server fsck DIR [--scratch-dir DIR] [--holdfast.store.s3.NAME=VALUE ...]
                     offline, server stopped: checks DIR, writing nothing in it
                   holdfast-server catalog-restore --data-dir DIR --from BACKUPDIR [--backup-id N] [--holdfast.store.s3.NAME=VALUE ...]
                     offline, server stopped: restores a catalog backup into DIR
                   holdfast-server reset-admin --data-dir DIR
                     offline: new random admin password, written to DIR/initial-admin-password
                   holdfast-server create-token --data-dir DIR --name N --role agent|worker|viewer|operator|admin
                                                [--volumes 'a,b*'] [--domain D] [--expires 30d] [--json]
                     offline: issues an API token and prints it once
                   holdfast-server COMMAND --help
                     prints the command's options and exit codes
                   holdfast-server help | --help | -h
                     prints this text""";
    /** The exit code of an unknown command (and of most commands' bad arguments). */
    static final int EXIT_USAGE = 2;

    @Option(names = {"-h", "--help"})
    boolean help;

    @Parameters(arity = "0..*", paramLabel = "COMMAND")
    List<String> words = new ArrayList<>();

    private final ToolConsole console;

    private ServerCli(ToolConsole console) {
        this.console = console;
    }

    /** Runs the command {@code args} names; exits with its code, unless it started the appliance, which runs on. */
    static void main(String[] args) {
        CommandLine cl = commandLine(ToolConsole.system());
        int code = execute(cl, args);
        if (!cl.getSubcommands().get("start").<StartCommand>getCommand().started()) {
            System.exit(code);
        }
    }

    /** Runs the command {@code args} names (its name first) with captured streams; returns the exit code (the tests' entry point). */
    public static int run(String[] args, PrintStream out, PrintStream err, Clock clock) {
        return run(args, ToolConsole.of(out, err, clock));
    }

    /** As {@link #run(String[], PrintStream, PrintStream, Clock)} with a whole console. */
    static int run(String[] args, ToolConsole console) {
        return execute(commandLine(console), args);
    }

    /** {@code args} with {@code command} in front: how a tool's own main names itself. */
    static String[] named(String command, String[] args) {
        String[] all = new String[args.length + 1];
        all[0] = command;
        System.arraycopy(args, 0, all, 1, args.length);
        return all;
    }

    private static int execute(CommandLine cl, String[] args) {
        try {
            return cl.execute(withDefaultCommand(args));
        } finally {
            cl.getOut().flush();
            cl.getErr().flush();
        }
    }

    /** No command word (nothing, or a setting first) means {@code start}, as it always has. */
    static String[] withDefaultCommand(String[] args) {
        boolean setting = args.length > 0 && args[0].startsWith("--") && !args[0].equals("--help");
        return args.length == 0 || setting ? named("start", args) : args;
    }

    /** The command tree with every command's streams and clock, and one way to report a bad command line. */
    static CommandLine commandLine(ToolConsole console) {
        CommandLine cl = new CommandLine(new ServerCli(console))
                .addSubcommand(new StartCommand())
                .addSubcommand(new GcRebuildCommand(console))
                .addSubcommand(new WorkerGcImportTool(console))
                .addSubcommand(new WorkerFsckTool(console))
                .addSubcommand(new FsckCommand(console))
                .addSubcommand(new CatalogRestoreTool(console))
                .addSubcommand(new ResetAdminCommand(console))
                .addSubcommand(new CreateTokenCommand(console));
        // start hands everything from its first unknown argument on to Spring, unchanged
        cl.getSubcommands().get("start").setStopAtUnmatched(true);
        // each command's customSynopsis starts with "usage: ", as the tools always printed it
        cl.getSubcommands().values().forEach(c -> c.getCommandSpec().usageMessage().synopsisHeading(""));
        cl.setExpandAtFiles(false); // "@name" is an argument, never a file to read arguments from
        cl.setUsageHelpWidth(120);
        cl.setOut(new PrintWriter(console.out(), true));
        cl.setErr(new PrintWriter(console.err(), true));
        cl.setParameterExceptionHandler((e, args) -> refuse(e, args, console.err()));
        return cl;
    }

    @Override
    public Integer call() {
        if (help || words.get(0).equals("help")) {
            console.out().println(USAGE);
            return 0;
        }
        return unknownCommand(words.get(0), console.err());
    }

    /** A bad command line: one line naming the problem and where the usage is; the command's usage exit code. */
    private static int refuse(ParameterException e, String[] args, PrintStream err) {
        CommandLine cmd = e.getCommandLine();
        if (cmd.getParent() == null) {
            return unknownCommand(args[0], err);
        }
        String name = cmd.getCommandName();
        String message = e.getMessage();
        err.println(name + ": " + message.substring(0, 1).toLowerCase(Locale.ROOT) + message.substring(1)
                + "; run 'holdfast-server " + name + " --help'");
        return cmd.getCommandSpec().exitCodeOnInvalidInput();
    }

    private static int unknownCommand(String word, PrintStream err) {
        err.println("holdfast-server: unknown command '" + word + "'");
        err.println(USAGE);
        return EXIT_USAGE;
    }
}
