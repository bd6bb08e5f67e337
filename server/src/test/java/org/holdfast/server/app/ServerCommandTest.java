package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Help and unknown commands, in the server's main dispatch and in the launcher
 * (server/bin/holdfast-server): help prints the usage and starts nothing; an unknown command is
 * refused with exit code 2.
 */
class ServerCommandTest {
    private static final Path LAUNCHER = Path.of("").toAbsolutePath().getParent().resolve("server/bin/holdfast-server");

    @Test
    void of_helpWordsAndCommands_nameWhatTheyAsk() {
        for (String help : List.of("help", "--help", "-h")) {
            assertThat(ServerCommand.of(new String[] {help})).as(help).isEqualTo(ServerCommand.HELP);
        }
        assertThat(ServerCommand.of(new String[0])).isEqualTo(ServerCommand.START);
        assertThat(ServerCommand.of(new String[] {"--holdfast.data-dir=/srv/h"})).isEqualTo(ServerCommand.START);
        assertThat(ServerCommand.of(new String[] {"start", "--server.port=9"})).isEqualTo(ServerCommand.START);
        assertThat(ServerCommand.rest(new String[] {"start", "--server.port=9"})).containsExactly("--server.port=9");
        assertThat(ServerCommand.rest(new String[] {"--server.port=9"})).containsExactly("--server.port=9");
        assertThat(ServerCommand.of(new String[] {"fsck", "/srv/h"})).isEqualTo(ServerCommand.FSCK);
        assertThat(ServerCommand.of(new String[] {"gc-rebuild"})).isEqualTo(ServerCommand.GC_REBUILD);
        assertThat(ServerCommand.of(new String[] {"worker-fsck", "--data-dir", "/srv/w"})).isEqualTo(ServerCommand.WORKER_FSCK);
        assertThat(ServerCommand.of(new String[] {"catalog-restore"})).isEqualTo(ServerCommand.CATALOG_RESTORE);
        assertThat(ServerCommand.of(new String[] {"create-token"})).isEqualTo(ServerCommand.CREATE_TOKEN);
        assertThat(ServerCommand.of(new String[] {"reset-admin"})).isEqualTo(ServerCommand.RESET_ADMIN);
        assertThat(ServerCommand.of(new String[] {"stat"})).isEqualTo(ServerCommand.UNKNOWN);
    }

    @Test
    void explain_help_printsTheUsageOnStdoutAndExitsZero_unknown_onStderrWithTwo() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = HoldfastServer.explain(ServerCommand.HELP, new String[] {"--help"}, print(out), print(err));
        assertThat(code).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).startsWith("usage: holdfast-server")
                .contains("reset-admin", "create-token", "gc-rebuild", "fsck", "catalog-restore", "start");
        assertThat(err.size()).isZero();

        out.reset();
        code = HoldfastServer.explain(ServerCommand.UNKNOWN, new String[] {"stat"}, print(out), print(err));
        assertThat(code).isEqualTo(2);
        assertThat(out.size()).isZero();
        assertThat(err.toString(StandardCharsets.UTF_8)).startsWith("holdfast-server: unknown command 'stat'")
                .contains(ServerCommand.USAGE);
    }

    @Test
    void launcher_help_printsTheServersUsageAndStartsNothing() throws Exception {
        for (String help : List.of("--help", "-h", "help")) {
            Run r = launch(help);
            assertThat(r.exit).as(help + ": " + r.err).isZero();
            assertThat(r.out).as(help).isEqualTo(ServerCommand.USAGE + "\n");
            assertThat(r.err).as(help).isEmpty();
        }
    }

    @Test
    void launcher_unknownCommand_printsTheUsageOnStderrAndExitsTwo() throws Exception {
        Run r = launch("stat");
        assertThat(r.exit).as(r.err).isEqualTo(2);
        assertThat(r.out).isEmpty();
        assertThat(r.err).isEqualTo("holdfast-server: unknown command 'stat'\n" + ServerCommand.USAGE + "\n");
    }

    /** Runs the launcher with a jar that does not exist: anything that gets as far as java fails, never builds. */
    private static Run launch(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("bash", LAUNCHER.toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().put("HOLDFAST_SERVER_JAR", "/nonexistent/holdfast-server.jar");
        Process p = pb.start();
        CompletableFuture<byte[]> err = CompletableFuture.supplyAsync(() -> {
            try {
                return p.getErrorStream().readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("the launcher did not end: " + cmd);
        }
        return new Run(p.exitValue(), out, new String(err.get(30, TimeUnit.SECONDS), StandardCharsets.UTF_8));
    }

    private static PrintStream print(ByteArrayOutputStream b) {
        return new PrintStream(b, true, StandardCharsets.UTF_8);
    }

    private record Run(int exit, String out, String err) {
    }
}
