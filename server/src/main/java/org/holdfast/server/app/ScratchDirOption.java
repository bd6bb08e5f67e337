package org.holdfast.server.app;

import java.nio.file.Path;
import picocli.CommandLine.Option;

/** The {@code --scratch-dir DIR} of the commands that copy metadata or fetch logs aside; default: the JVM's temporary directory. */
final class ScratchDirOption {
    @Option(names = "--scratch-dir", paramLabel = "DIR", order = 50,
            description = "scratch space for the run: the private copy of the metadata, data logs fetched from the bucket"
                    + " (default: the temporary directory, ${sys:java.io.tmpdir})")
    Path scratchDir;

    /** The directory given, or the JVM's temporary directory. */
    Path scratchDir() {
        return scratchDir != null ? scratchDir : Path.of(System.getProperty("java.io.tmpdir"));
    }
}
