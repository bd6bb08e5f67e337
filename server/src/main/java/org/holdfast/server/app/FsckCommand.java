package org.holdfast.server.app;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.holdfast.server.gc.FsckTool;
import org.holdfast.server.gc.OfflineProperties;
import org.holdfast.server.store.object.S3Settings;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Unmatched;

/**
 * {@code fsck DIR}: the command line of {@link FsckTool}, the offline check of a stopped server's
 * data directory. Bad arguments end with 3 ("could not run"), as they always have.
 */
@Command(name = "fsck", sortOptions = false, exitCodeOnInvalidInput = 3,
        customSynopsis = {"usage: holdfast-server fsck DIR [--scratch-dir DIR] [--holdfast.store.s3.NAME=VALUE ...]"},
        description = {"Checks the data directory DIR of a stopped server, writing nothing in it (the catalog and GC metadata",
            "are checked on a scratch copy). With backend s3, the server's --holdfast.store.* settings (or system properties,",
            "or HOLDFAST_STORE_* environment variables) let it fetch data logs missing locally; the bucket is only read.", ""},
        footer = {"", "exit: 0 clean, 1 leaks or bookkeeping disagreements, 2 data loss, 3 could not run (or bad arguments)"})
final class FsckCommand implements Callable<Integer> {
    @Mixin
    HelpOption help;

    @Parameters(index = "0", paramLabel = "DIR", description = "the server's data directory (holdfast.data-dir)")
    Path dataDir;

    @Mixin
    ScratchDirOption scratch;

    /** The server's --holdfast.NAME=VALUE settings (ServerSettings checks that nothing else is among them). */
    @Unmatched
    List<String> settings = new ArrayList<>();

    @Spec
    CommandSpec spec;

    private final ToolConsole console;

    FsckCommand(ToolConsole console) {
        this.console = console;
    }

    @Override
    public Integer call() {
        // a stray argument is a usage error, before anything is opened
        OfflineProperties properties = ServerSettings.of(settings, spec);
        try {
            return FsckTool.run(dataDir, scratch.scratchDir(), S3Settings.fromProperties(properties));
        } catch (RuntimeException e) {
            console.err().println("fsck could not run: " + e.getMessage());
            return 3;
        }
    }
}
