package org.holdfast.server.app;

import java.io.PrintStream;
import org.holdfast.common.kill.KillPoints;
import org.holdfast.server.gc.FsckTool;
import org.holdfast.server.gc.GcRebuildTool;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;

/**
 * The Holdfast server: {@code java -jar holdfast-server.jar} starts a working appliance on
 * ./holdfast-data; a first argument naming an offline tool runs that instead ({@link ServerCommand}).
 */
@SpringBootApplication(scanBasePackages = {"org.holdfast.server.app", "org.holdfast.server.api"})
@EnableConfigurationProperties(HoldfastProperties.class)
public class HoldfastServer {

    public static void main(String[] args) {
        ServerCommand command = ServerCommand.of(args);
        switch (command) {
            case GC_REBUILD -> GcRebuildTool.main(ServerCommand.rest(args));
            case WORKER_GC_IMPORT -> WorkerGcImportTool.main(ServerCommand.rest(args));
            case WORKER_FSCK -> WorkerFsckTool.main(ServerCommand.rest(args));
            case FSCK -> FsckTool.main(ServerCommand.rest(args));
            case CATALOG_RESTORE -> CatalogRestoreTool.main(ServerCommand.rest(args));
            // CredentialTool dispatches on the command word, so it keeps it
            case RESET_ADMIN, CREATE_TOKEN -> CredentialTool.main(args);
            case HELP, UNKNOWN -> System.exit(explain(command, args, System.out, System.err));
            case START -> start(ServerCommand.rest(args));
        }
    }

    /** Prints the usage for {@code help} (stdout, exit 0) or an unknown command (stderr, exit 2); returns the exit code. */
    static int explain(ServerCommand command, String[] args, PrintStream out, PrintStream err) {
        if (command == ServerCommand.HELP) {
            out.println(ServerCommand.USAGE);
            return 0;
        }
        err.println("holdfast-server: unknown command '" + args[0] + "'");
        err.println(ServerCommand.USAGE);
        return 2;
    }

    private static void start(String[] args) {
        // loads the kill-point registry now: a mistyped -Dholdfast.kill-point fails the start, not a later hit
        KillPoints.armedPoint().ifPresent(p -> System.err.println("holdfast: TEST MODE: kill point " + p.name()
                + " is armed; this process halts when it reaches it"));
        SpringApplication.run(HoldfastServer.class, args);
    }
}
