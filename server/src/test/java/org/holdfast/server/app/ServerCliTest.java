package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import picocli.CommandLine;

/**
 * The server's command line (picocli, {@link ServerCli}): the default command, help and unknown
 * commands, in the server's main dispatch and in the launcher (server/bin/holdfast-server): help
 * prints the usage and starts nothing; an unknown command is refused with exit code 2.
 */
class ServerCliTest {
    private static final Path LAUNCHER = Path.of("").toAbsolutePath().getParent().resolve("server/bin/holdfast-server");
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(String... args) {
        out.reset();
        err.reset();
        return ServerCli.run(args, ToolConsole.of(print(out), print(err), Clock.systemUTC()));
    }

    @Test
    void withDefaultCommand_noCommandWord_isStart_aCommandWordStays() {
        assertThat(ServerCli.withDefaultCommand(new String[0])).containsExactly("start");
        assertThat(ServerCli.withDefaultCommand(new String[] {"--holdfast.data-dir=/srv/h"})).containsExactly("start", "--holdfast.data-dir=/srv/h");
        assertThat(ServerCli.withDefaultCommand(new String[] {"start", "--server.port=9"})).containsExactly("start", "--server.port=9");
        assertThat(ServerCli.withDefaultCommand(new String[] {"fsck", "/srv/h"})).containsExactly("fsck", "/srv/h");
        assertThat(ServerCli.withDefaultCommand(new String[] {"--help"})).containsExactly("--help");
    }

    @Test
    void start_springSettings_reachSpringUnchangedAndInOrder() {
        CommandLine cl = ServerCli.commandLine(ToolConsole.of(print(out), print(err), Clock.systemUTC()));
        List<String> settings = List.of("--holdfast.data-dir=/srv/h", "--server.port=9", "plain", "--spring.profiles.active=a,b",
                "-Dodd", "@file", "--holdfast.x=--y");

        List<String> args = new ArrayList<>(List.of("start"));
        args.addAll(settings);
        cl.parseArgs(args.toArray(String[]::new));

        assertThat(cl.getSubcommands().get("start").<StartCommand>getCommand().settings).isEqualTo(settings);
    }

    @Test
    void run_helpWords_printTheUsageOnStdoutAndExitZero() {
        for (String help : List.of("help", "--help", "-h")) {
            assertThat(run(help)).as(help).isZero();
            assertThat(out.toString(StandardCharsets.UTF_8)).as(help).isEqualTo(ServerCli.USAGE + "\n");
            assertThat(err.size()).as(help).isZero();
        }
    }

    @Test
    void run_unknownCommand_printsTheUsageOnStderrAndExitsTwo() {
        for (String unknown : List.of("stat", "-x")) {
            assertThat(run(unknown, "--data-dir", "/srv/h")).as(unknown).isEqualTo(2);
            assertThat(out.size()).isZero();
            assertThat(err.toString(StandardCharsets.UTF_8)).isEqualTo("holdfast-server: unknown command '" + unknown + "'\n"
                    + ServerCli.USAGE + "\n");
        }
    }

    @Test
    void run_commandHelp_printsThatCommandsUsageAndExitsZero() {
        for (String command : List.of("start", "gc-rebuild", "worker-gc-import", "worker-fsck", "fsck", "catalog-restore",
                "reset-admin", "create-token")) {
            assertThat(ServerCli.USAGE).as(command).contains(command.equals("start") ? "holdfast-server [start]" : "holdfast-server " + command);
            for (String help : List.of("--help", "-h")) {
                assertThat(run(command, help)).as(command + " " + help).isZero();
                assertThat(out.toString(StandardCharsets.UTF_8)).as(command).startsWith("usage: holdfast-server ")
                        .contains(command.equals("start") ? "[start]" : command).contains("-h, --help");
                assertThat(err.size()).as(command).isZero();
            }
        }
        run("gc-rebuild", "--help");
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("--data-dir", "--grace", "--pass-chunks", "--worker", "--out", "--json",
                "exit: 0 rebuilt");
    }

    @Test
    void run_gcRebuildUnknownOption_oneLineNamingIt_exit2() {
        assertThat(run("gc-rebuild", "--data-dir", "/nonexistent", "--fast")).isEqualTo(2);

        assertThat(err.toString(StandardCharsets.UTF_8)).isEqualTo("gc-rebuild: unknown option: '--fast';"
                + " run 'holdfast-server gc-rebuild --help'\n");
        assertThat(out.size()).isZero();
    }

    @Test
    void run_gcRebuildMissingDataDir_oneLineNamingIt_exit2() {
        assertThat(run("gc-rebuild", "--json")).isEqualTo(2);

        assertThat(err.toString(StandardCharsets.UTF_8)).startsWith("gc-rebuild: missing required option: '--data-dir")
                .endsWith("; run 'holdfast-server gc-rebuild --help'\n").hasLineCount(1);
    }

    @Test
    void run_workerFsckUnknownOptionOrMissingCounts_oneLine_exit3AsItsOtherRefusals() {
        assertThat(run("worker-fsck", "--data-dir", "/nonexistent", "--counts", "/x", "--quick")).isEqualTo(3);
        // as fsck's: it takes the worker's --holdfast.* settings (backend s3), so the hint names their form
        assertThat(err.toString(StandardCharsets.UTF_8)).isEqualTo("worker-fsck: unknown option: '--quick' (server settings take"
                + " the form --holdfast.NAME=VALUE); run 'holdfast-server worker-fsck --help'\n");

        assertThat(run("worker-fsck", "--data-dir", "/nonexistent")).isEqualTo(3);
        assertThat(err.toString(StandardCharsets.UTF_8)).startsWith("worker-fsck: missing required option: '--counts")
                .endsWith("; run 'holdfast-server worker-fsck --help'\n").hasLineCount(1);
    }

    @Test
    void run_optionWithoutItsValue_namesTheOption() {
        assertThat(run("worker-gc-import", "--file", "/x", "--data-dir")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("--data-dir").hasLineCount(1);
    }

    @Test
    void run_gcRebuildNotADataDirectory_namesTheSettingToGive_exit3() {
        assertThat(run("gc-rebuild", "--data-dir", "/nonexistent")).isEqualTo(3);
        assertThat(err.toString(StandardCharsets.UTF_8)).isEqualTo("gc-rebuild: /nonexistent is not a Holdfast data directory"
                + " (no catalog/ in it); give the server's holdfast.data-dir\n");
    }

    @Test
    void run_fsckStrayArgument_refusedAsUnknown_exit3_serverSettingsAccepted() {
        assertThat(run("fsck", "/nonexistent", "--verbose")).isEqualTo(3);
        assertThat(err.toString(StandardCharsets.UTF_8)).isEqualTo("fsck: unknown option: '--verbose' (server settings take the form"
                + " --holdfast.NAME=VALUE); run 'holdfast-server fsck --help'\n");

        assertThat(run("fsck", "/nonexistent", "--holdfast.store.backend=local")).isEqualTo(3);
        assertThat(err.toString(StandardCharsets.UTF_8)).startsWith("fsck could not run: ").contains("/nonexistent")
                .doesNotContain("--help").endsWith("; give the server's holdfast.data-dir\n");

        assertThat(run("fsck")).isEqualTo(3);
        assertThat(err.toString(StandardCharsets.UTF_8)).startsWith("fsck: missing required parameter: 'DIR'");
    }

    @Test
    void run_offlineCommandsMisspeltSetting_refusedNamingTheNearest_beforeOpeningAnything() {
        assertThat(run("fsck", "/nonexistent", "--holdfast.store.s3.bukcet=b")).isEqualTo(3);
        assertThat(err.toString(StandardCharsets.UTF_8)).isEqualTo("fsck: unknown setting holdfast.store.s3.bukcet (command line):"
                + " did you mean holdfast.store.s3.bucket?; run 'holdfast-server fsck --help'\n");

        assertThat(run("catalog-restore", "--data-dir", "/nonexistent", "--from", "/nonexistent-backups",
                "--holdfast.store.backend=s3", "--holdfast.store.s3.endpont=http://127.0.0.1:1")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).startsWith("catalog-restore: unknown setting holdfast.store.s3.endpont"
                + " (command line): did you mean holdfast.store.s3.endpoint?").hasLineCount(1);
    }

    /** start: a misspelt setting ends the start with exit 2 while the environment is prepared: no data directory is made. */
    @Test
    @ExtendWith(OutputCaptureExtension.class)
    void run_startMisspeltSetting_exit2_namesItAndTheNearest_dataDirectoryNotCreated(@TempDir Path tmp, CapturedOutput output) {
        Path dataDir = tmp.resolve("data");
        assertThat(run("start", "--holdfast.data-dir=" + dataDir, "--server.port=0", "--holdfast.ingest.port=0",
                "--holdfast.gc.default-retenton=7d")).isEqualTo(2);
        assertThat(dataDir).doesNotExist();
        assertThat(output.toString()).contains("APPLICATION FAILED TO START", "holdfast.gc.default-retenton (command line):"
                + " did you mean holdfast.gc.default-retention?", "Nothing was opened or changed.");
    }

    /** start: a failure after the settings (the agent port in use) exits 1 with Spring's analysis, not a second report. */
    @Test
    @ExtendWith(OutputCaptureExtension.class)
    void run_startAgentPortInUse_exit1_theAnalysisOnly_noStackTraceFromTheCommandLine(@TempDir Path tmp, CapturedOutput output)
            throws java.io.IOException {
        try (java.net.ServerSocket taken = new java.net.ServerSocket(0)) {
            assertThat(run("start", "--holdfast.data-dir=" + tmp.resolve("data"), "--server.port=0",
                    "--holdfast.ingest.port=" + taken.getLocalPort())).isEqualTo(1);
        }
        assertThat(output.toString()).contains("APPLICATION FAILED TO START", "Holdfast cannot listen on these ports",
                "holdfast.ingest.port=");
        assertThat(tmp.resolve("data")).as("refused before the data directory was made").doesNotExist();
        assertThat(err.toString(StandardCharsets.UTF_8)).as("picocli prints no second report or trace").isEmpty();
    }

    @Test
    void run_createTokenBadRoleOrOptionOfAnotherCommand_exit2() {
        assertThat(run("create-token", "--data-dir", "/nonexistent", "--name", "x", "--role", "boss")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("--role", "unknown role").hasLineCount(1);

        assertThat(run("reset-admin", "--data-dir", "/nonexistent", "--name", "x")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).startsWith("reset-admin: unknown options: '--name', 'x';");
    }

    @Test
    void launcher_help_printsTheServersUsageAndStartsNothing() throws Exception {
        for (String help : List.of("--help", "-h", "help")) {
            Run r = launch(help);
            assertThat(r.exit).as(help + ": " + r.err).isZero();
            assertThat(r.out).as(help).isEqualTo(ServerCli.USAGE + "\n");
            assertThat(r.err).as(help).isEmpty();
        }
    }

    @Test
    void launcher_unknownCommand_printsTheUsageOnStderrAndExitsTwo() throws Exception {
        Run r = launch("stat");
        assertThat(r.exit).as(r.err).isEqualTo(2);
        assertThat(r.out).isEmpty();
        assertThat(r.err).isEqualTo("holdfast-server: unknown command 'stat'\n" + ServerCli.USAGE + "\n");
    }

    /** The JVM gets server/bin/jvm.options, then JAVA_OPTS (later, so it wins); a collector there replaces the file's. */
    @Test
    void launcher_start_passesTheJvmOptionsFileThenJavaOpts(@TempDir Path tmp) throws Exception {
        Path java = tmp.resolve("java");
        Files.writeString(java, "#!/bin/sh\nfor a in \"$@\"; do echo \"$a\"; done\n");
        Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwxr-xr-x"));
        Map<String, String> path = Map.of("PATH", tmp + ":" + System.getenv("PATH"));
        List<String> file = Files.readAllLines(LAUNCHER.resolveSibling("jvm.options")).stream()
                .map(l -> l.replaceAll("#.*", "").strip()).filter(l -> !l.isEmpty()).toList();

        Run plain = launch(LAUNCHER, path, "start", "--server.port=9");
        List<String> expected = new ArrayList<>(file);
        expected.addAll(List.of("-jar", "/nonexistent/holdfast-server.jar", "start", "--server.port=9"));
        assertThat(file).isNotEmpty();
        assertThat(plain.out.lines().toList()).as(plain.err).isEqualTo(expected);

        // a copy of the launcher beside a file that chooses a collector
        Path bin = Files.createDirectories(tmp.resolve("bin"));
        Files.copy(LAUNCHER, bin.resolve("holdfast-server"));
        Files.writeString(bin.resolve("jvm.options"), "# a comment\n-XX:+UseSerialGC\n\n  -XX:CompileThresholdScaling=8  # why\n");
        assertThat(launch(bin.resolve("holdfast-server"), path).out.lines().toList())
                .containsExactly("-XX:+UseSerialGC", "-XX:CompileThresholdScaling=8", "-jar", "/nonexistent/holdfast-server.jar");
        Map<String, String> opts = new HashMap<>(path);
        opts.put("JAVA_OPTS", "-XX:+UseG1GC -XX:CompileThresholdScaling=1");
        Run overridden = launch(bin.resolve("holdfast-server"), opts);
        assertThat(overridden.out.lines().toList()).as(overridden.err).containsExactly("-XX:CompileThresholdScaling=8", "-XX:+UseG1GC",
                "-XX:CompileThresholdScaling=1", "-jar", "/nonexistent/holdfast-server.jar");
    }

    private static Run launch(String... args) throws Exception {
        return launch(LAUNCHER, Map.of(), args);
    }

    /** Runs the launcher with a jar that does not exist: anything that gets as far as java fails, never builds. */
    private static Run launch(Path launcher, Map<String, String> env, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("bash", launcher.toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().put("HOLDFAST_SERVER_JAR", "/nonexistent/holdfast-server.jar");
        pb.environment().remove("JAVA_OPTS");
        pb.environment().putAll(env);
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
