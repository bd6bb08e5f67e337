package org.holdfast.server.app;

import java.util.Arrays;

/**
 * What the server's first argument asks for: the appliance (no command, {@code start}, or only
 * {@code --name=value} settings), an offline tool, or the usage text. The launcher
 * (server/bin/holdfast-server) prints the same {@link #USAGE}; a test holds the two equal.
 */
enum ServerCommand {
    START, GC_REBUILD, WORKER_GC_IMPORT, WORKER_FSCK, FSCK, CATALOG_RESTORE, RESET_ADMIN, CREATE_TOKEN, HELP, UNKNOWN;

    static final String USAGE = """
            usage: holdfast-server [start] [--holdfast.data-dir=DIR] [--server.port=8080] [--NAME=VALUE ...]
                     runs the appliance (default data directory ./holdfast-data); settings: docs/operations.md
                   holdfast-server gc-rebuild --data-dir DIR [--grace 24h] [--json]
                     offline, server stopped: rebuilds DIR/gc from the catalog
                   holdfast-server gc-rebuild --data-dir DIR --worker N --out FILE [--json]
                     offline, master stopped (data on workers): writes worker N's GC counts to FILE
                   holdfast-server worker-gc-import --data-dir DIR --file FILE [--grace 24h] [--json]
                     offline, worker stopped: rebuilds DIR/range-data/gc from FILE
                   holdfast-server worker-fsck --data-dir DIR --counts FILE [--scratch-dir DIR] [--json]
                     offline, worker stopped: checks DIR/range-data against FILE, writing nothing in DIR
                   holdfast-server fsck DIR [--scratch-dir DIR] [--holdfast.store.s3.NAME=VALUE ...]
                     offline, server stopped: checks DIR, writing nothing in it
                   holdfast-server catalog-restore --data-dir DIR --from BACKUPDIR [--backup-id N] [--holdfast.store.s3.NAME=VALUE ...]
                     offline, server stopped: restores a catalog backup into DIR
                   holdfast-server reset-admin --data-dir DIR
                     offline: new random admin password, written to DIR/initial-admin-password
                   holdfast-server create-token --data-dir DIR --name N --role agent|worker|viewer|operator|admin
                                                [--volumes 'a,b*'] [--domain D] [--expires 30d] [--json]
                     offline: issues an API token and prints it once
                   holdfast-server help | --help | -h
                     prints this text""";

    /** The command {@code args} name; {@link #START} when the first argument is a setting or absent. */
    static ServerCommand of(String[] args) {
        if (args.length == 0 || args[0].startsWith("--") && !args[0].equals("--help")) {
            return START;
        }
        return switch (args[0]) {
            case "start" -> START;
            case "gc-rebuild" -> GC_REBUILD;
            case "worker-gc-import" -> WORKER_GC_IMPORT;
            case "worker-fsck" -> WORKER_FSCK;
            case "fsck" -> FSCK;
            case "catalog-restore" -> CATALOG_RESTORE;
            case "reset-admin" -> RESET_ADMIN;
            case "create-token" -> CREATE_TOKEN;
            case "help", "--help", "-h" -> HELP;
            default -> UNKNOWN;
        };
    }

    /** The arguments after the command word ({@code args} unchanged when it started with a setting). */
    static String[] rest(String[] args) {
        return args.length > 0 && !args[0].startsWith("-") ? Arrays.copyOfRange(args, 1, args.length) : args;
    }
}
