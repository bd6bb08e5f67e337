package org.holdfast.server.app;

import java.util.ArrayList;
import java.util.List;
import org.holdfast.server.gc.OfflineProperties;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;

/**
 * The server's own {@code --holdfast.NAME=VALUE} settings (the object store's, for example) on an
 * offline command's line, read as the server reads them ({@link OfflineProperties}). Their names
 * are open-ended, so a command that takes them collects its unmatched arguments ({@code @Unmatched})
 * and hands them here, where anything that is not such a setting is refused as the unknown option it is.
 */
final class ServerSettings {
    private ServerSettings() {
    }

    /** The settings among {@code unmatched}, then system properties and the environment; a stray argument is a usage error. */
    static OfflineProperties of(List<String> unmatched, CommandSpec spec) {
        List<String> rest = new ArrayList<>();
        OfflineProperties props = OfflineProperties.of(unmatched.toArray(String[]::new), rest);
        if (!rest.isEmpty()) {
            throw new ParameterException(spec.commandLine(), (rest.get(0).startsWith("-") ? "unknown option: '"
                    : "unexpected argument: '") + rest.get(0) + "' (server settings take the form --holdfast.NAME=VALUE)");
        }
        return props;
    }
}
