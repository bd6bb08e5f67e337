package org.holdfast.server.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The systemd units in docker/systemd, installed into a scratch root the way docs/operations.md
 * ("Install with systemd") installs them, checked by {@code systemd-analyze verify}, and held to the
 * hardening the design asks for. A broken copy must fail the same check, so the check can fail.
 */
class SystemdUnitsTest {
    private static final Path SYSTEMD = Path.of("").toAbsolutePath().getParent().resolve("docker/systemd");
    private static final List<String> UNITS = List.of("holdfast-server.service", "holdfast-agent.service");

    @TempDir
    Path root;

    @Test
    void units_installedIntoAScratchRoot_passSystemdAnalyzeVerify() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/systemd-analyze")), "systemd-analyze is not installed");
        install();
        Result r = verify();
        assertThat(r.exit).as("systemd-analyze verify:\n%s", r.output).isZero();
        assertThat(r.output).as("systemd-analyze verify says nothing about the units").isBlank();
    }

    @Test
    void verify_ofABrokenUnit_fails() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/systemd-analyze")), "systemd-analyze is not installed");
        install();
        Path unit = root.resolve("etc/systemd/system/holdfast-server.service");
        Files.writeString(unit, Files.readString(unit).replace("ProtectSystem=strict", "ProtectSystem=strictly")
                .replace("ExecStart=/opt/holdfast/bin/holdfast-server", "ExecStart=/opt/holdfast/bin/missing"));
        Result r = verify();
        assertThat(r.exit).as("a unit naming a missing program fails verify:\n%s", r.output).isNotZero();
        assertThat(r.output).contains("strictly");
    }

    @Test
    void sysusers_createTheServiceAccounts_withoutALoginShell() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/systemd-sysusers")), "systemd-sysusers is not installed");
        Files.createDirectories(root.resolve("etc"));
        Result r = run("systemd-sysusers", "--root=" + root, SYSTEMD.resolve("holdfast.sysusers.conf").toString());
        assertThat(r.exit).as(r.output).isZero();
        List<String> passwd = Files.readAllLines(root.resolve("etc/passwd"));
        assertThat(passwd).anyMatch(l -> l.startsWith("holdfast:") && l.endsWith(":/var/lib/holdfast:/usr/sbin/nologin"));
        assertThat(passwd).anyMatch(l -> l.startsWith("holdfast-agent:") && l.endsWith(":/var/lib/holdfast-agent:/usr/sbin/nologin"));
    }

    @Test
    void units_runAsTheirOwnUsers_withTheHardeningOptions() throws IOException {
        for (String unit : UNITS) {
            List<String> lines = Files.readAllLines(SYSTEMD.resolve(unit));
            assertThat(lines).as(unit).contains("NoNewPrivileges=yes", "ProtectSystem=strict", "PrivateTmp=yes", "ProtectKernelModules=yes",
                    "RestrictSUIDSGID=yes", "CapabilityBoundingSet=", "UMask=0077");
            assertThat(lines).as(unit + " never runs as root").anyMatch(l -> l.matches("User=holdfast(-agent)?"));
            assertThat(lines).as(unit + ": the JIT needs writable executable memory").doesNotContain("MemoryDenyWriteExecute=yes");
        }
        List<String> server = Files.readAllLines(SYSTEMD.resolve("holdfast-server.service"));
        assertThat(server).as("the server reaches no device").contains("PrivateDevices=yes");
        List<String> agent = Files.readAllLines(SYSTEMD.resolve("holdfast-agent.service"));
        assertThat(agent).as("the agent reads block devices, only those, read-only")
                .contains("DevicePolicy=closed", "DeviceAllow=block-sd r", "SupplementaryGroups=disk")
                .noneMatch(l -> l.startsWith("DeviceAllow=") && !l.endsWith(" r"));
    }

    /** What the install procedure does: the units, the launchers under /opt/holdfast/bin, the system's own units. */
    private void install() throws IOException {
        Path units = Files.createDirectories(root.resolve("etc/systemd/system"));
        for (String unit : UNITS) {
            Files.copy(SYSTEMD.resolve(unit), units.resolve(unit));
        }
        Path bin = Files.createDirectories(root.resolve("opt/holdfast/bin"));
        Path repo = SYSTEMD.getParent().getParent();
        Files.copy(repo.resolve("server/bin/holdfast-server"), bin.resolve("holdfast-server"), StandardCopyOption.COPY_ATTRIBUTES);
        Files.copy(repo.resolve("client/bin/holdfast-agent"), bin.resolve("holdfast-agent"), StandardCopyOption.COPY_ATTRIBUTES);
        Files.copy(repo.resolve("server/bin/jvm.options"), bin.resolve("jvm.options"));
        for (Path p : List.of(bin.resolve("holdfast-server"), bin.resolve("holdfast-agent"))) {
            Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        // the targets and sockets the units order themselves against come from the host's systemd
        Path system = Path.of("/lib/systemd/system");
        Path target = Files.createDirectories(root.resolve("usr/lib/systemd/system"));
        try (Stream<Path> files = Files.list(system)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                if (Files.isRegularFile(f)) {
                    Files.copy(f, target.resolve(f.getFileName().toString()));
                }
            }
        }
    }

    private Result verify() throws Exception {
        List<String> cmd = new ArrayList<>(List.of("systemd-analyze", "verify", "--root=" + root));
        cmd.addAll(UNITS);
        return run(cmd.toArray(String[]::new));
    }

    private static Result run(String... command) throws Exception {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("timed out: " + String.join(" ", command));
        }
        return new Result(p.exitValue(), out);
    }

    private record Result(int exit, String output) {
    }
}
