package org.holdfast.bench;

import org.holdfast.bench.cli.RunCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The benchmark tool's entry point: {@code java -jar holdfast-bench-*-exec.jar run ...}. */
@Command(name = "holdfast-bench", mixinStandardHelpOptions = true, version = "holdfast-bench 0.1",
        description = "Generates reproducible workloads and measures Holdfast beside restic and borg.",
        subcommands = {RunCommand.class, CommandLine.HelpCommand.class})
public final class HoldfastBench implements Runnable {
    /** Runs the command line and exits with its code. */
    public static void main(String[] args) {
        System.exit(new CommandLine(new HoldfastBench()).execute(args));
    }

    @Override
    public void run() {
        new CommandLine(this).usage(System.out);
    }
}
