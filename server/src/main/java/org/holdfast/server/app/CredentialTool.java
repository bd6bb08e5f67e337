package org.holdfast.server.app;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import org.holdfast.server.catalog.RocksCredentialStore;
import org.holdfast.server.security.ApiTokens;
import org.holdfast.server.security.AuditLog;
import org.holdfast.server.security.InitialAdmin;
import org.holdfast.server.security.Lifetimes;
import org.holdfast.server.security.Role;
import org.holdfast.server.security.UserDirectory;
import org.holdfast.server.security.VolumeScope;
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
 * not run (nothing changed).
 */
public final class CredentialTool {
    static final String USAGE = """
            usage: holdfast-server reset-admin --data-dir DIR
                   holdfast-server create-token --data-dir DIR --name NAME --role agent|worker|viewer|operator|admin
                                                [--volumes 'db1,web-*'] [--domain default] [--expires 30d] [--json]
              The server must be stopped. reset-admin writes a new admin password to DIR/initial-admin-password.
              create-token prints the new token once; keep it, it cannot be shown again.""";

    private CredentialTool() {
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err, Clock.systemUTC()));
    }

    /** {@code args[0]} is the command; returns the exit code. */
    public static int run(String[] args, PrintStream out, PrintStream err, Clock clock) {
        if (args.length == 0) {
            err.println(USAGE);
            return 2;
        }
        String command = args[0];
        Options o;
        try {
            o = Options.parse(command, Arrays.copyOfRange(args, 1, args.length));
        } catch (IllegalArgumentException e) {
            err.println(command + ": " + e.getMessage());
            err.println(USAGE);
            return 2;
        }
        if (o.help) {
            out.println(USAGE);
            return 0;
        }
        if (!Files.isDirectory(o.dataDir)) {
            err.println(command + ": " + o.dataDir + " does not exist; give the server's holdfast.data-dir");
            return 3;
        }
        try (DataDirectory dd = DataDirectory.open(o.dataDir);
             MetadataDb db = MetadataDb.open(dd.catalogDir())) {
            RocksCredentialStore store = new RocksCredentialStore(db);
            if (command.equals("reset-admin")) {
                Path file = InitialAdmin.reset(new UserDirectory(store, new SpringPasswordHasher(), clock, AuditLog.NONE),
                        dd.root(), "local:reset-admin");
                out.println("reset-admin: the new password of user 'admin' is in " + file
                        + " (readable only by you); log in and change it, then delete the file");
                return 0;
            }
            ApiTokens.IssuedToken t;
            try {
                t = new ApiTokens(store, clock, AuditLog.NONE).issue(new ApiTokens.TokenRequest(o.name, o.role, o.scope, o.domain,
                        o.expires), "local:create-token", "local");
            } catch (IllegalArgumentException e) {
                err.println("create-token: " + e.getMessage());
                return 2;
            }
            String expires = t.record().expiresMillis() == 0 ? null : Instant.ofEpochMilli(t.record().expiresMillis()).toString();
            if (o.json) {
                out.println("{\"id\":\"" + t.record().id() + "\",\"name\":\"" + json(o.name) + "\",\"role\":\"" + o.role.wireName()
                        + "\",\"volumes\":[" + String.join(",", o.scope.patterns().stream().map(p -> "\"" + p + "\"").toList())
                        + "],\"domain\":\"" + t.record().domain() + "\",\"expiresAt\":" + (expires == null ? "null" : "\"" + expires + "\"")
                        + ",\"token\":\"" + t.token() + "\"}");
            } else {
                // a worker token reaches no volume: its scope is not shown, as the docs say it takes none
                String volumes = o.role == Role.WORKER ? "" : ", volumes " + String.join(",", o.scope.patterns());
                err.println("create-token: token " + t.record().id() + " '" + o.name + "' (" + o.role.wireName() + volumes
                        + ", domain " + t.record().domain() + ", expires "
                        + (expires == null ? "never" : expires) + "). It is shown once, below; only its hash is kept:");
                out.println(t.token());
            }
            return 0;
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

    private static final class Options {
        Path dataDir;
        String name;
        Role role;
        VolumeScope scope = VolumeScope.ALL;
        String domain;
        Duration expires;
        boolean json;
        boolean help;

        static Options parse(String command, String[] args) {
            if (!command.equals("reset-admin") && !command.equals("create-token")) {
                throw new IllegalArgumentException("unknown command; use reset-admin or create-token");
            }
            boolean token = command.equals("create-token");
            Options o = new Options();
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                switch (a) {
                    case "--data-dir" -> o.dataDir = Path.of(value(args, ++i, a));
                    case "-h", "--help" -> o.help = true;
                    case "--name", "--role", "--volumes", "--domain", "--expires", "--json" -> {
                        if (!token) {
                            throw new IllegalArgumentException(a + " belongs to create-token");
                        }
                        switch (a) {
                            case "--name" -> o.name = value(args, ++i, a);
                            case "--role" -> o.role = Role.parse(value(args, ++i, a));
                            case "--volumes" -> o.scope = new VolumeScope(List.of(value(args, ++i, a).split(",")));
                            case "--domain" -> o.domain = value(args, ++i, a);
                            case "--expires" -> o.expires = Lifetimes.parse(value(args, ++i, a));
                            default -> o.json = true;
                        }
                    }
                    default -> throw new IllegalArgumentException("unknown argument '" + a + "'");
                }
            }
            if (o.help) {
                return o;
            }
            if (o.dataDir == null) {
                throw new IllegalArgumentException("--data-dir is required");
            }
            if (token && (o.name == null || o.role == null)) {
                throw new IllegalArgumentException("--name and --role are required");
            }
            return o;
        }

        private static String value(String[] args, int i, String name) {
            if (i >= args.length) {
                throw new IllegalArgumentException(name + " needs a value");
            }
            return args[i];
        }
    }
}
