package org.holdfast.server.app;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import org.holdfast.server.catalog.RocksCredentialStore;
import org.holdfast.server.security.ApiTokens;
import org.holdfast.server.security.AuditLog;
import org.holdfast.server.security.InitialAdmin;
import org.holdfast.server.security.Role;
import org.holdfast.server.security.UserDirectory;
import org.holdfast.server.store.DataDirectory;
import org.holdfast.server.store.DataDirectoryInUseException;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.StoreException;

/**
 * The offline credential tools, run while the server is stopped (the data directory lock refuses
 * them otherwise):
 * <pre>
 * holdfast-server reset-admin  --data-dir D
 * holdfast-server create-token --data-dir D --name N --role agent|worker|viewer|operator|admin
 *                              [--volumes 'a,b*'] [--domain D] [--expires 30d] [--json]
 * </pre>
 * {@code reset-admin} writes the new password to {@code D/initial-admin-password} (mode 0600) and
 * prints only the file's path. {@code create-token} prints the token on stdout once (for scripts,
 * compose files and tests); only its hash is stored. Exit codes: 0 done, 2 bad arguments, 3 could
 * not run (nothing changed). The command lines: {@link ResetAdminCommand}, {@link CreateTokenCommand}.
 */
public final class CredentialTool {
    private CredentialTool() {
    }

    public static void main(String[] args) {
        if (!isCredentialCommand(args)) {
            System.exit(refuse(args, System.err));
        }
        ServerCli.main(args);
    }

    /** {@code args[0]} is the command ({@code reset-admin} or {@code create-token}); returns the exit code. */
    public static int run(String[] args, PrintStream out, PrintStream err, Clock clock) {
        return isCredentialCommand(args) ? ServerCli.run(args, out, err, clock) : refuse(args, err);
    }

    private static boolean isCredentialCommand(String[] args) {
        return args.length > 0 && (args[0].equals("reset-admin") || args[0].equals("create-token"));
    }

    private static int refuse(String[] args, PrintStream err) {
        err.println((args.length == 0 ? "credentials" : args[0]) + ": unknown command; use reset-admin or create-token"
                + " (holdfast-server reset-admin --help, holdfast-server create-token --help)");
        return ServerCli.EXIT_USAGE;
    }

    /** {@code reset-admin}: a new random admin password, written to DIR/initial-admin-password; returns the exit code. */
    static int resetAdmin(Path dataDir, PrintStream out, PrintStream err, Clock clock) {
        return withCredentials("reset-admin", dataDir, err, (dd, store) -> {
            Path file = InitialAdmin.reset(new UserDirectory(store, new SpringPasswordHasher(), clock, AuditLog.NONE),
                    dd.root(), "local:reset-admin");
            out.println("reset-admin: the new password of user 'admin' is in " + file
                    + " (readable only by you); log in and change it, then delete the file");
            return 0;
        });
    }

    /** {@code create-token}: issues {@code request} and prints the token once (stdout); returns the exit code. */
    static int createToken(Path dataDir, ApiTokens.TokenRequest request, boolean json, PrintStream out, PrintStream err, Clock clock) {
        return withCredentials("create-token", dataDir, err, (dd, store) -> {
            ApiTokens.IssuedToken t;
            try {
                t = new ApiTokens(store, clock, AuditLog.NONE).issue(request, "local:create-token", "local");
            } catch (IllegalArgumentException e) {
                err.println("create-token: " + e.getMessage());
                return 2;
            }
            String expires = t.record().expiresMillis() == 0 ? null : Instant.ofEpochMilli(t.record().expiresMillis()).toString();
            Role role = request.role();
            if (json) {
                out.println("{\"id\":\"" + t.record().id() + "\",\"name\":\"" + json(request.name()) + "\",\"role\":\""
                        + role.wireName() + "\",\"volumes\":[" + String.join(",", request.scope().patterns().stream()
                                .map(p -> "\"" + p + "\"").toList())
                        + "],\"domain\":\"" + t.record().domain() + "\",\"expiresAt\":" + (expires == null ? "null" : "\"" + expires + "\"")
                        + ",\"token\":\"" + t.token() + "\"}");
            } else {
                // a worker token reaches no volume: its scope is not shown, as the docs say it takes none
                String volumes = role == Role.WORKER ? "" : ", volumes " + String.join(",", request.scope().patterns());
                err.println("create-token: token " + t.record().id() + " '" + request.name() + "' (" + role.wireName() + volumes
                        + ", domain " + t.record().domain() + ", expires "
                        + (expires == null ? "never" : expires) + "). It is shown once, below; only its hash is kept:");
                out.println(t.token());
            }
            return 0;
        });
    }

    /** What a credential command does with the locked data directory and its credential store; returns the exit code. */
    private interface CredentialAction {
        int apply(DataDirectory dd, RocksCredentialStore store);
    }

    private static int withCredentials(String command, Path dataDir, PrintStream err, CredentialAction action) {
        if (!Files.isDirectory(dataDir)) {
            // creating it here could make a misspelt path a second, empty data directory
            err.println(command + ": " + dataDir + " does not exist; give the server's holdfast.data-dir, or, before the server's"
                    + " first start, create that directory first (install -d -m 700 " + dataDir + "); nothing was written");
            return 3;
        }
        try (DataDirectory dd = DataDirectory.open(dataDir);
             MetadataDb db = MetadataDb.open(dd.catalogDir())) {
            return action.apply(dd, new RocksCredentialStore(db));
        } catch (DataDirectoryInUseException e) {
            // the server's own advice ("choose another holdfast.data-dir") is wrong here: the tool must change this directory
            err.println(command + ": " + e.path() + " is in use by a running Holdfast server or another offline tool (lock file "
                    + e.lockFile() + "): stop the server (or wait for the tool), then run " + command + " again"
                    + (command.equals("create-token") ? "; or, with the server running, create the token over the API"
                            + " (POST /api/v1/tokens) or on the console's Tokens page" : ""));
            return 3;
        } catch (StoreException | java.io.UncheckedIOException e) {
            err.println(command + ": " + e.getMessage());
            return 3;
        }
    }

    private static String json(String s) {
        return s.replace("\\", "\\\\").replace("\"", "\\\"");
    }
}
