package org.holdfast.server.app;

import picocli.CommandLine.Option;

/** The {@code -h}/{@code --help} option every command takes: prints its usage on stdout, exit 0, runs nothing. */
final class HelpOption {
    @Option(names = {"-h", "--help"}, usageHelp = true, order = 99, description = "print this help and exit")
    boolean help;
}
