package org.holdfast.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StateDirectoryTest {
    @TempDir
    Path dir;

    @Test
    void of_xdgStateHomeSet_holdfastInsideIt() {
        StateDirectory s = StateDirectory.of(Map.of("XDG_STATE_HOME", "/var/lib/st", "HOME", "/home/a"), "/java/home");
        assertThat(s.path()).isEqualTo(Path.of("/var/lib/st/holdfast"));
        assertThat(s.legacyPath()).isEqualTo(Path.of("/home/a/.holdfast"));
    }

    @Test
    void of_noXdgOrRelativeXdg_homeLocalState() {
        assertThat(StateDirectory.of(Map.of("HOME", "/home/a"), "/java/home").path())
                .isEqualTo(Path.of("/home/a/.local/state/holdfast"));
        assertThat(StateDirectory.of(Map.of("HOME", "/home/a", "XDG_STATE_HOME", "rel/dir"), "/j").path())
                .as("a relative XDG_STATE_HOME is ignored, as the specification says")
                .isEqualTo(Path.of("/home/a/.local/state/holdfast"));
    }

    @Test
    void of_homeUnset_javaUserHome() {
        assertThat(StateDirectory.of(Map.of(), "/java/home").path()).isEqualTo(Path.of("/java/home/.local/state/holdfast"));
    }

    @Test
    void resolve_oldStateInDotHoldfast_movedOnceWithNotice() throws Exception {
        Path home = dir.resolve("home");
        Path old = Files.createDirectories(home.resolve(".holdfast"));
        Files.writeString(old.resolve("known-servers"), "h:7070 AB\n");
        Files.createDirectories(old.resolve("agent-state/h_7070"));
        Files.writeString(old.resolve("agent-state/h_7070/vm.state"), "state");
        StateDirectory s = StateDirectory.of(Map.of("HOME", home.toString()), "/unused");
        List<String> notices = new ArrayList<>();

        Path known = s.resolve(StateDirectory.KNOWN_SERVERS, notices::add);

        Path fresh = home.resolve(".local/state/holdfast");
        assertThat(known).isEqualTo(fresh.resolve("known-servers"));
        assertThat(Files.readString(known)).isEqualTo("h:7070 AB\n");
        assertThat(Files.readString(fresh.resolve("agent-state/h_7070/vm.state"))).isEqualTo("state");
        assertThat(old.resolve("known-servers")).doesNotExist();
        assertThat(old.resolve("agent-state")).doesNotExist();
        assertThat(notices).hasSize(2).allMatch(n -> n.contains("moved") && n.contains(fresh.toString()));
        assertThat(s.migrate(notices::add)).as("nothing left to move").isEmpty();
        assertThat(notices).hasSize(2);
    }

    @Test
    void migrate_oldStateUnderJavaUserHomeNotHome_movedFromThere() throws Exception {
        // an older agent took ~ from user.home (the passwd entry); this run has another HOME
        Path passwdHome = dir.resolve("root");
        Path old = Files.createDirectories(passwdHome.resolve(".holdfast/agent-state/h_7070"));
        Files.writeString(old.resolve("vm.state"), "state");
        Files.writeString(passwdHome.resolve(".holdfast/known-servers"), "h:7070 AB\n");
        Path home = Files.createDirectories(dir.resolve("home"));
        List<String> notices = new ArrayList<>();

        List<String> moved = StateDirectory.of(Map.of("HOME", home.toString()), passwdHome.toString()).migrate(notices::add);

        Path fresh = home.resolve(".local/state/holdfast");
        assertThat(moved).containsExactly(StateDirectory.KNOWN_SERVERS, StateDirectory.AGENT_STATE);
        assertThat(Files.readString(fresh.resolve("agent-state/h_7070/vm.state"))).isEqualTo("state");
        assertThat(Files.readString(fresh.resolve("known-servers"))).isEqualTo("h:7070 AB\n");
        assertThat(passwdHome.resolve(".holdfast/known-servers")).doesNotExist();
        assertThat(notices).hasSize(2).allMatch(n -> n.contains(passwdHome.resolve(".holdfast").toString()));
    }

    @Test
    void migrate_oldStateUnderBothHomes_homeWins() throws Exception {
        Path passwdHome = dir.resolve("root");
        Files.createDirectories(passwdHome.resolve(".holdfast"));
        Files.writeString(passwdHome.resolve(".holdfast/known-servers"), "passwd\n");
        Path home = Files.createDirectories(dir.resolve("home/.holdfast")).getParent();
        Files.writeString(home.resolve(".holdfast/known-servers"), "home\n");

        StateDirectory.of(Map.of("HOME", home.toString()), passwdHome.toString()).migrate(n -> { });

        assertThat(Files.readString(home.resolve(".local/state/holdfast/known-servers"))).isEqualTo("home\n");
        assertThat(Files.readString(passwdHome.resolve(".holdfast/known-servers"))).as("left where it was").isEqualTo("passwd\n");
    }

    @Test
    void migrate_entryAlreadyInNewPlace_neitherOverwrittenNorMoved() throws Exception {
        Path home = dir.resolve("home");
        Files.createDirectories(home.resolve(".holdfast"));
        Files.writeString(home.resolve(".holdfast/known-servers"), "old\n");
        Path fresh = Files.createDirectories(home.resolve(".local/state/holdfast"));
        Files.writeString(fresh.resolve("known-servers"), "new\n");
        List<String> moved = StateDirectory.of(Map.of("HOME", home.toString()), "/unused").migrate(n -> { });
        assertThat(moved).isEmpty();
        assertThat(Files.readString(fresh.resolve("known-servers"))).isEqualTo("new\n");
        assertThat(Files.readString(home.resolve(".holdfast/known-servers"))).isEqualTo("old\n");
    }

    @Test
    void resolve_directoryLeftOpenByAnEarlierRelease_madePrivateOnceWithNotice() throws Exception {
        Path home = dir.resolve("home");
        Path open = Files.createDirectories(home.resolve(".local/state/holdfast/agent-state/h_7070"));
        Files.setPosixFilePermissions(home.resolve(".local/state/holdfast"), java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        StateDirectory s = StateDirectory.of(Map.of("HOME", home.toString()), "/unused");
        List<String> notices = new ArrayList<>();

        s.resolve(StateDirectory.AGENT_STATE, notices::add);

        assertThat(java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(s.path()))).isEqualTo("rwx------");
        assertThat(notices).singleElement().asString().contains("readable only by you").contains("rwxr-xr-x");
        s.resolve(StateDirectory.KNOWN_SERVERS, notices::add);
        assertThat(notices).as("said once").hasSize(1);
        assertThat(open).isDirectory();
    }

    @Test
    void migrate_acrossFileSystems_copyAKilledAgentLeft_replacedAndMoveCompletes() throws Exception {
        Path other = otherFileSystem();
        try {
            Path old = Files.createDirectories(other.resolve(".holdfast/agent-state/h_7070"));
            Files.writeString(old.resolve("vm.state"), "state");
            Path fresh = dir.resolve("new");
            // the copy a migration killed half-way left: a directory copy cannot replace a non-empty directory
            Path partial = Files.createDirectories(fresh.resolve("agent-state.moving/h_7070"));
            Files.writeString(partial.resolve("vm.state"), "sta");
            Files.writeString(partial.resolve("stray"), "x");
            List<String> notices = new ArrayList<>();

            assertThat(new StateDirectory(fresh, List.of(other.resolve(".holdfast"))).migrate(notices::add))
                    .containsExactly(StateDirectory.AGENT_STATE);

            assertThat(fresh.resolve("agent-state/h_7070/vm.state")).hasContent("state");
            assertThat(fresh.resolve("agent-state/h_7070/stray")).doesNotExist();
            assertThat(fresh.resolve("agent-state.moving")).doesNotExist();
            assertThat(other.resolve(".holdfast/agent-state")).doesNotExist();
        } finally {
            deleteTree(other);
        }
    }

    @Test
    void migrate_secondAgentStartsDuringACopyAcrossFileSystems_noStateFileLost() throws Exception {
        Path other = otherFileSystem();
        try {
            Path old = Files.createDirectories(other.resolve(".holdfast/agent-state/h_7070"));
            int files = 3000;
            for (int i = 0; i < files; i++) {
                Files.writeString(old.resolve("vm" + i + ".state"), "state " + i);
            }
            Path fresh = dir.resolve("new");
            List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
            Thread first = new Thread(() -> {
                try {
                    new StateDirectory(fresh, List.of(other.resolve(".holdfast"))).migrate(line -> { });
                } catch (Throwable t) {
                    failures.add(t);
                }
            });
            first.start();
            // the second agent (a cron job for another volume, the daemon) starts while the first one copies
            Path partial = fresh.resolve("agent-state.moving/h_7070");
            long deadline = System.nanoTime() + 20_000_000_000L;
            while (first.isAlive() && System.nanoTime() < deadline && count(partial) < 300) {
                Thread.onSpinWait();
            }
            try {
                new StateDirectory(fresh, List.of(other.resolve(".holdfast"))).migrate(line -> { });
            } catch (Throwable t) {
                failures.add(t);
            }
            first.join(30_000);

            for (int i = 0; i < files; i++) {
                Path moved = fresh.resolve("agent-state/h_7070/vm" + i + ".state");
                Path left = old.resolve("vm" + i + ".state");
                assertThat(Files.exists(moved) ? Files.readString(moved) : Files.exists(left) ? Files.readString(left) : null)
                        .as("state file %d, in the new place or still in the old one", i).isEqualTo("state " + i);
            }
            assertThat(failures).as("neither agent fails").isEmpty();
            assertThat(fresh.resolve("agent-state/h_7070")).isDirectoryContaining(p -> p.endsWith("vm" + (files - 1) + ".state"));
        } finally {
            deleteTree(other);
        }
    }

    /** A new directory on another file system than the test's, where moving the state must copy it. */
    private Path otherFileSystem() throws java.io.IOException {
        Path shm = Path.of("/dev/shm");
        assumeTrue(Files.isWritable(shm) && !Files.getFileStore(shm).equals(Files.getFileStore(dir)), "needs a second file system");
        return Files.createTempDirectory(shm, "holdfast-test-");
    }

    private static void deleteTree(Path root) throws java.io.IOException {
        try (var walk = Files.walk(root)) {
            for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    private static long count(Path d) {
        try (var s = Files.list(d)) {
            return s.count();
        } catch (java.io.IOException e) {
            return 0;
        }
    }
}
