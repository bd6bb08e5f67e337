package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.holdfast.common.ports.TestPorts;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent as an experienced administrator meets it, real server and real agent processes: a
 * restore never overwrites what exists without {@code --force}, gives a new file mode 0600 and an
 * old one its mode back, and leaves no temporary file after Ctrl-C; an agent aimed at the HTTP port
 * says so; an interrupted backup leaves no temporary state file; operating-system failures reach
 * the user in the system's words with what to do next.
 */
class AgentPolishTest {
    private static final LogDir logs = new LogDir("AgentPolishTest");
    private static final String VOLUME = "polish";
    private static final int IMAGE_BYTES = 64 << 20;
    /**
     * The Ctrl-C tests run the agent through a link this slow (the image takes over 15 s), so the
     * command is still transferring when the signal lands, however loaded the machine: on the
     * direct loopback a restore of the image can finish between the test seeing its temporary
     * file and the signal arriving.
     */
    private static final long SLOW_LINK_BYTES_PER_SECOND = 2 << 20;

    @TempDir
    static Path work;
    static ServerProcess server;
    static AgentProcess agent;
    static Path image;
    static String snapshot;

    @BeforeAll
    static void backUp() {
        agent = new AgentProcess(logs);
        image = VolumeImage.generate(17, IMAGE_BYTES).writeTo(work.resolve("source.img"));
        server = ServerProcess.start(work.resolve("server"), "sungem", logs);
        snapshot = agent.backup(server, VOLUME, image, work.resolve("state")).snapshotId();
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void restore_existingTarget_refusedWithoutForce_modeKeptWithIt_newFile0600() throws Exception {
        Path dir = Files.createDirectories(work.resolve("targets"));
        Path target = dir.resolve("vm.img");
        agent.restore(server, VOLUME, snapshot, target);
        assertThat(Files.mismatch(image, target)).isEqualTo(-1);
        assertThat(mode(target)).as("a new file holds a whole disk: owner only").isEqualTo("rw-------");

        Files.write(target, "an image someone still needs".getBytes());
        AgentResult refused = agent.run(AgentProcess.restoreArgs(server, VOLUME, snapshot, target));
        assertThat(refused.exitCode()).as("%s", refused).isEqualTo(2);
        assertThat(refused.stderr()).contains("exists and is not empty").contains("pass --force")
                .doesNotContain("Exception");
        assertThat(Files.readString(target)).isEqualTo("an image someone still needs");

        Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rw-r-----"));
        agent.restore(server, VOLUME, snapshot, target, "--force");
        assertThat(Files.mismatch(image, target)).isEqualTo(-1);
        assertThat(mode(target)).as("restoring in place keeps the file's mode").isEqualTo("rw-r-----");
        assertThat(leftovers(dir)).isEmpty();
    }

    @Test
    void restore_ctrlCWhileWriting_noTemporaryFileAndNoTarget() throws Exception {
        Path dir = Files.createDirectories(work.resolve("interrupted"));
        Path target = dir.resolve("vm.img");
        try (SlowLink link = SlowLink.to(server.ingestAddress(), SLOW_LINK_BYTES_PER_SECOND)) {
            interruptOnceWriting(agent.start(through(link, AgentProcess.restoreArgs(server, VOLUME, snapshot, target))), dir,
                    AgentPolishTest::leftovers);
        }
        assertThat(target).as("the target never appears half-written").doesNotExist();
    }

    @Test
    void backup_ctrlCWhileReading_noTemporaryStateFileLeft() throws Exception {
        Path state = Files.createDirectories(work.resolve("state-interrupted"));
        try (SlowLink link = SlowLink.to(server.ingestAddress(), SLOW_LINK_BYTES_PER_SECOND)) {
            interruptOnceWriting(agent.start(through(link, AgentProcess.backupArgs(server, "polish-ctrl-c", image, state))), state,
                    d -> files(d, ".tmp"));
        }
        assertThat(files(state, ".state")).as("no state without a committed snapshot").isEmpty();
    }

    @Test
    void agent_aimedAtHttpPort_saysSoWithNetworkExit() throws Exception {
        String http = "127.0.0.1:" + server.httpPort();
        // TLS with the server's own certificate: the handshake works, the HTTPS server answers HELLO in HTTP
        List<String> a = new ArrayList<>(List.of("snapshots", "--server", http, "--volume", VOLUME));
        a.addAll(server.agentTrustArgs());
        AgentResult r = agent.run(a.toArray(String[]::new));
        assertThat(r.exitCode()).as("%s", r).isEqualTo(3);
        assertThat(r.stderr()).contains("this is the server's HTTP port; the agent port is 7070 by default")
                .contains("--server 127.0.0.1:7070").doesNotContain("malformed frame").doesNotContain("Exception");

        Path target = work.resolve("via-http.img");
        List<String> restore = new ArrayList<>(List.of("restore", "--server", http, "--volume", VOLUME, "--snapshot",
                "latest", "--target", target.toString()));
        restore.addAll(server.agentTrustArgs());
        AgentResult rr = agent.run(restore.toArray(String[]::new));
        assertThat(rr.exitCode()).as("%s", rr).isEqualTo(3);
        assertThat(rr.stderr()).contains("this is the server's HTTP port");
        assertThat(target).doesNotExist();

        // plain TCP at the HTTPS port: the agent is told to use TLS, still the network exit
        AgentResult plain = agent.run("snapshots", "--server", http, "--volume", VOLUME, "--no-tls");
        assertThat(plain.exitCode()).as("%s", plain).isEqualTo(3);
        assertThat(plain.stderr()).contains("run without --no-tls").doesNotContain("Exception");
    }

    @Test
    void osErrors_explainedInTheSystemsWords_withWhatToDoNext() throws Exception {
        // sysfs refuses new files even to root: a real EACCES
        Path sys = Path.of("/sys/holdfast-polish.img");
        AgentResult denied = agent.run(AgentProcess.restoreArgs(server, VOLUME, snapshot, sys));
        assertThat(denied.exitCode()).as("%s", denied).isEqualTo(5);
        assertThat(denied.stderr()).contains("cannot open target " + sys + ": permission denied")
                .contains("check the permissions of " + sys).doesNotContain("Exception");

        Path missing = work.resolve("no-such-token");
        AgentResult noFile = agent.run("snapshots", "--server", server.ingestAddress(), "--volume", VOLUME,
                "--token-file", missing.toString());
        assertThat(noFile.exitCode()).as("%s", noFile).isEqualTo(2);
        assertThat(noFile.stderr()).contains("cannot read --token-file " + missing + ": no such file or directory")
                .contains("check the path").doesNotContain("Exception");

        AgentResult refused = agent.run("snapshots", "--server", "127.0.0.1:" + TestPorts.claim(), "--volume", VOLUME); // claimed: no test JVM listens there
        assertThat(refused.exitCode()).as("%s", refused).isEqualTo(3);
        assertThat(refused.stderr()).contains("connection refused").contains("agent port (7070 by default)")
                .doesNotContain("Exception");
    }

    @Test
    void restore_ontoFullDisk_noSpaceExplainedAndNothingLeft() throws Exception {
        try (SmallDisk disk = SmallDisk.mount(work.resolve("small"), 4 << 20)) {
            assumeTrue(disk.real(), "needs a real tmpfs (root): " + disk.kind());
            Path target = disk.dir().resolve("vm.img");
            AgentResult full = agent.run(AgentProcess.restoreArgs(server, VOLUME, snapshot, target));
            assertThat(full.exitCode()).as("%s", full).isEqualTo(5);
            assertThat(full.stderr()).contains("no space left on device").contains("free space on the file system of")
                    .doesNotContain("Exception");
            assertThat(leftovers(disk.dir())).isEmpty();
            assertThat(target).doesNotExist();
        }
    }

    /** Lists a command's temporary files in a directory. */
    private interface TempFiles {
        List<Path> in(Path dir) throws Exception;
    }

    /**
     * Waits until {@code running} has a temporary file in {@code dir}, sends it Ctrl-C, and checks
     * that it stopped with a failure and that its temporary files are gone.
     */
    private static void interruptOnceWriting(AgentProcess.Running running, Path dir, TempFiles temps) throws Exception {
        long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
        while (temps.in(dir).isEmpty() && running.isAlive() && System.nanoTime() < deadline) {
            Thread.sleep(2);
        }
        assertThat(temps.in(dir)).as("the agent writes a temporary file first").isNotEmpty();
        running.interrupt();
        AgentResult r = running.await();
        // exit 0: the agent ignored SIGINT and finished (started with it ignored: ChildJvm, DEFAULT_SIGNALS)
        assertThat(r.exitCode()).as("Ctrl-C ends the command: %s", r).isNotZero();
        assertThat(temps.in(dir)).as("its temporary file is removed on Ctrl-C: %s", r).isEmpty();
    }

    /** {@code args} aimed at {@code link} instead of the server, with the agent token in a file. */
    private static String[] through(SlowLink link, String[] args) {
        List<String> a = new ArrayList<>(List.of(args));
        a.set(a.indexOf("--server") + 1, link.address());
        a.addAll(List.of("--token-file", server.agentTokenFile().toString()));
        return a.toArray(String[]::new);
    }

    private static String mode(Path p) throws Exception {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(p));
    }

    /** The restore's temporary files in {@code dir}. */
    private static List<Path> leftovers(Path dir) throws Exception {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().endsWith(".holdfast-restore")).toList();
        }
    }

    /** The files under {@code dir} (any depth) whose names end with {@code suffix}. */
    private static List<Path> files(Path dir, String suffix) throws Exception {
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(p -> p.getFileName().toString().endsWith(suffix)).toList();
        }
    }
}
