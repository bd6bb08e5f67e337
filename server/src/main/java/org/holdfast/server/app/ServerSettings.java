package org.holdfast.server.app;

import java.util.ArrayList;
import java.util.List;
import org.holdfast.server.gc.OfflineProperties;
import org.springframework.core.env.SimpleCommandLinePropertySource;
import org.springframework.core.env.StandardEnvironment;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;

/**
 * The server's own {@code --holdfast.NAME=VALUE} settings (the object store's, for example) on an
 * offline command's line, read as the server reads them ({@link OfflineProperties}). Their names
 * are open-ended, so a command that takes them collects its unmatched arguments ({@code @Unmatched};
 * picocli does not carry that over from a mixin) and hands them here, where anything that is not such
 * a setting is refused as the unknown option it is, as is a {@code holdfast.*} name that is no setting
 * (on the line, in the environment or a system property: {@link UnknownSettings}).
 */
final class ServerSettings {
    private ServerSettings() {
    }

    /** The settings among {@code settings}, then system properties and the environment; a stray argument or unknown setting is a usage error. */
    static OfflineProperties of(List<String> settings, CommandSpec spec) {
        List<String> rest = new ArrayList<>();
        OfflineProperties props = OfflineProperties.of(settings.toArray(String[]::new), rest);
        if (!rest.isEmpty()) {
            throw new ParameterException(spec.commandLine(), (rest.get(0).startsWith("-") ? "unknown option: '"
                    : "unexpected argument: '") + rest.get(0) + "' (server settings take the form --holdfast.NAME=VALUE)");
        }
        StandardEnvironment env = new StandardEnvironment();
        env.getPropertySources().addFirst(new SimpleCommandLinePropertySource(settings.toArray(String[]::new)));
        try {
            UnknownSettings.check(env);
        } catch (UnknownSettingException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
        return props;
    }
}
