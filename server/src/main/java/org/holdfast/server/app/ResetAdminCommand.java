package org.holdfast.server.app;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code reset-admin --data-dir DIR}: the command line of {@link CredentialTool#resetAdmin}. */
@Command(name = "reset-admin", sortOptions = false,
        customSynopsis = "usage: holdfast-server reset-admin --data-dir DIR",
        description = {"Writes a new random password of user 'admin' to DIR/initial-admin-password (readable only by you).",
            "The server must be stopped.", ""},
        footer = {"", "exit: 0 done, 2 bad arguments, 3 could not run (nothing changed)"})
final class ResetAdminCommand implements Callable<Integer> {
    @Mixin
    HelpOption help;

    @Mixin
    DataDirOption dataDir;

    private final ToolConsole console;

    ResetAdminCommand(ToolConsole console) {
        this.console = console;
    }

    @Override
    public Integer call() {
        return CredentialTool.resetAdmin(dataDir.dataDir, console.out(), console.err(), console.clock());
    }
}
