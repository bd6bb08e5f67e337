package org.holdfast.server.app;

import picocli.CommandLine.Option;

/** The {@code --json} switch: the result as one JSON object on stdout instead of text. */
final class JsonOption {
    @Option(names = "--json", order = 90, description = "print the result as one JSON object")
    boolean json;
}
