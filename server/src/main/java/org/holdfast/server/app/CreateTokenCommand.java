package org.holdfast.server.app;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import org.holdfast.server.security.ApiTokens;
import org.holdfast.server.security.Lifetimes;
import org.holdfast.server.security.Role;
import org.holdfast.server.security.VolumeScope;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.TypeConversionException;

/** {@code create-token --data-dir DIR --name N --role R ...}: the command line of {@link CredentialTool#createToken}. */
@Command(name = "create-token", sortOptions = false,
        customSynopsis = {"usage: holdfast-server create-token --data-dir DIR --name NAME --role agent|worker|viewer|operator|admin",
            "                                    [--volumes 'db1,web-*'] [--domain default] [--expires 30d] [--json]"},
        description = {"Issues an API token and prints it once on stdout; keep it, it cannot be shown again (only its hash is",
            "stored). The server must be stopped; with it running, use POST /api/v1/tokens or the console's Tokens page.", ""},
        footer = {"", "exit: 0 done, 2 bad arguments, 3 could not run (nothing changed)"})
final class CreateTokenCommand implements Callable<Integer> {
    @Mixin
    HelpOption help;

    @Mixin
    DataDirOption dataDir;

    @Option(names = "--name", paramLabel = "NAME", required = true, order = 1, description = "the token's name")
    String name;

    @Option(names = "--role", paramLabel = "ROLE", required = true, converter = RoleConverter.class, order = 2,
            description = "agent, worker, viewer, operator or admin")
    Role role;

    @Option(names = "--volumes", paramLabel = "PATTERNS", converter = ScopeConverter.class, order = 3,
            description = "the volumes an agent token reaches, comma-separated, * and ? as wildcards (default: all)")
    VolumeScope scope = VolumeScope.ALL;

    @Option(names = "--domain", paramLabel = "DOMAIN", order = 4, description = "the token's domain (default: default)")
    String domain;

    @Option(names = "--expires", paramLabel = "DURATION", converter = LifetimeConverter.class, order = 5,
            description = "how long the token is valid (30d, 12h, ...; default: never expires)")
    Duration expires;

    @Mixin
    JsonOption json;

    private final ToolConsole console;

    CreateTokenCommand(ToolConsole console) {
        this.console = console;
    }

    @Override
    public Integer call() {
        return CredentialTool.createToken(dataDir.dataDir, new ApiTokens.TokenRequest(name, role, scope, domain, expires), json.json,
                console.out(), console.err(), console.clock());
    }

    /** A role by its wire name. */
    static final class RoleConverter implements ITypeConverter<Role> {
        @Override
        public Role convert(String value) {
            try {
                return Role.parse(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }

    /** Comma-separated volume name patterns. */
    static final class ScopeConverter implements ITypeConverter<VolumeScope> {
        @Override
        public VolumeScope convert(String value) {
            try {
                return new VolumeScope(List.of(value.split(",")));
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }

    /** A token lifetime as the API takes it. */
    static final class LifetimeConverter implements ITypeConverter<Duration> {
        @Override
        public Duration convert(String value) {
            try {
                return Lifetimes.parse(value);
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException(e.getMessage());
            }
        }
    }
}
