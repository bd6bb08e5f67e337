package org.holdfast.server.app;

import java.nio.file.Path;
import picocli.CommandLine.Option;

/** The required {@code --data-dir DIR} of the offline commands: the stopped server's (or worker's) holdfast.data-dir. */
final class DataDirOption {
    @Option(names = "--data-dir", paramLabel = "DIR", required = true, order = 0,
            description = "the data directory (the server's holdfast.data-dir); the server must be stopped")
    Path dataDir;
}
