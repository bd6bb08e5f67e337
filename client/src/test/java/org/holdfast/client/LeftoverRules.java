package org.holdfast.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The check every kind of agent temporary file passes: the exact leftover a SIGKILL leaves goes at
 * the next run, with a notice; a file another live agent process holds (its lock) stays, and goes
 * once that process was killed.
 */
public final class LeftoverRules {
    private LeftoverRules() {
    }

    /** What the next run does about leftovers (the code under test). */
    @FunctionalInterface
    public interface Sweep {
        void run() throws Exception;
    }

    /** Checks the rules for temporary files {@code <prefix><random><suffix>} in {@code dir}; {@code notices} is what {@code sweep} tells. */
    public static void check(Path dir, String prefix, String suffix, Sweep sweep, List<String> notices) throws Exception {
        Files.createDirectories(dir);
        Path killed = dir.resolve(prefix + "9876543210" + suffix); // TempFileGuard's name, as a killed run leaves it
        Files.write(killed, new byte[300]);
        notices.clear();
        sweep.run();
        assertThat(killed).as("a killed run's leftover").doesNotExist();
        assertThat(notices).as("one line per file removed").singleElement().asString().contains(killed.toString());

        LiveTempFileHolder.Held live = LiveTempFileHolder.start(dir, prefix, suffix, 500);
        try {
            notices.clear();
            sweep.run();
            assertThat(live.file()).as("another live agent's file").exists().hasSize(500);
            assertThat(notices).isEmpty();
        } finally {
            live.kill();
        }
        sweep.run();
        assertThat(live.file()).as("the same file once its agent was killed").doesNotExist();
    }
}
