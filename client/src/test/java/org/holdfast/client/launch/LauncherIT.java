package org.holdfast.client.launch;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.holdfast.client.FakeServer;
import org.holdfast.client.Images;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The launcher script (client/bin/holdfast-agent) with the real exec jar (runs after package): it
 * unpacks the jar, records the class-data-sharing archive on the first backup or restore, and keeps
 * working, with clean output, when the archive is missing, damaged or stale or the cache unusable.
 */
class LauncherIT {
    static final int BS = 4096;
    static final Path MODULE = Path.of(System.getProperty("holdfast.client.dir", ".")).toAbsolutePath();

    @TempDir
    Path dir;
    FakeServer server;
    Path jar;
    Path cache;
    Path image;

    record Run(int exit, String stdout, String stderr) {
    }

    @BeforeEach
    void start() throws Exception {
        try (Stream<Path> s = Files.list(MODULE.resolve("target"))) {
            Path built = s.filter(p -> p.getFileName().toString().matches("holdfast-client-.*-exec\\.jar")).findFirst()
                    .orElseThrow(() -> new IllegalStateException("no exec jar under " + MODULE.resolve("target")));
            jar = Files.copy(built, dir.resolve("agent-exec.jar")); // a private copy: the test changes its mtime
        }
        cache = dir.resolve("cache");
        server = new FakeServer();
        image = Images.create(dir.resolve("vol.img"), 3 * 1024 * 1024 + 1000, BS, 3, 5);
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private Run launch(Map<String, String> extraEnv, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("bash", MODULE.resolve("bin/holdfast-agent").toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().put("HOLDFAST_AGENT_JAR", jar.toString());
        pb.environment().put("HOLDFAST_AGENT_CACHE", cache.toString());
        pb.environment().put("HOME", dir.toString());
        pb.environment().put("JAVA_OPTS", "-Xmx256m");
        pb.environment().putAll(extraEnv);
        pb.redirectOutput(dir.resolve("out.txt").toFile()).redirectError(dir.resolve("err.txt").toFile());
        Process p = pb.start();
        assertThat(p.waitFor(3, TimeUnit.MINUTES)).as("launcher finished").isTrue();
        return new Run(p.exitValue(), Files.readString(dir.resolve("out.txt"), StandardCharsets.UTF_8),
                Files.readString(dir.resolve("err.txt"), StandardCharsets.UTF_8));
    }

    private Run backup(Map<String, String> env) throws Exception {
        return launch(env, "backup", "--server", server.address(), "--no-tls", "--volume", "vm1", "--source", image.toString(),
                "--state-dir", dir.resolve("state").toString(), "--json");
    }

    private Run restore(Map<String, String> env, Path target) throws Exception {
        return launch(env, "restore", "--server", server.address(), "--no-tls", "--volume", "vm1", "--snapshot", "latest",
                "--target", target.toString(), "--json");
    }

    private List<Path> cacheDirs() throws IOException {
        if (!Files.isDirectory(cache)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(cache)) {
            return s.filter(Files::isDirectory).toList();
        }
    }

    private static void assertJson(Run r) throws IOException {
        assertThat(r.exit()).as("%s", r).isZero();
        assertThat(new ObjectMapper().readTree(r.stdout()).isObject()).as("stdout is one JSON object: %s", r.stdout()).isTrue();
    }

    @Test
    void launcher_firstBackupRecordsArchive_laterRunsUseItAndRestoreExactly() throws Exception {
        Run v = launch(Map.of(), "--version");
        assertThat(v.exit()).as("%s", v).isZero();
        assertThat(v.stdout()).contains("holdfast-agent");
        assertThat(cacheDirs()).hasSize(1);
        Path layout = cacheDirs().get(0);
        assertThat(layout.resolve("agent.jar")).exists();
        assertThat(layout.resolve("agent.jsa")).doesNotExist(); // --version does not record one

        assertJson(backup(Map.of()));
        assertThat(layout.resolve("agent.jsa")).isNotEmptyFile();
        try (Stream<Path> s = Files.list(layout)) {
            assertThat(s.map(p -> p.getFileName().toString())).noneMatch(n -> n.endsWith(".tmp"));
        }

        Path target = dir.resolve("restored.img");
        Run r = restore(Map.of(), target);
        assertJson(r);
        assertThat(r.stderr()).doesNotContain("warning");
        assertThat(Images.sameContent(image, target)).isTrue();
    }

    @Test
    void launcher_tunesTheJvm_andACollectorInJavaOptsReplacesItsOwn() throws Exception {
        Run own = launch(Map.of("JAVA_OPTS", "-Xmx256m -XX:+PrintCommandLineFlags"), "--version");
        assertThat(own.exit()).as("%s", own).isZero();
        assertThat(own.stdout()).contains("-XX:CompileThresholdScaling=8", "-XX:+UseSerialGC");

        Run chosen = launch(Map.of("JAVA_OPTS", "-Xmx256m -XX:+UseParallelGC -XX:+PrintCommandLineFlags"), "--version");
        assertThat(chosen.exit()).as("two collectors would be refused: %s", chosen).isZero();
        assertThat(chosen.stdout()).contains("-XX:+UseParallelGC").doesNotContain("UseSerialGC");
        assertJson(backup(Map.of("JAVA_OPTS", "-Xmx256m -XX:+UseParallelGC")));
    }

    @Test
    void launcher_damagedArchive_stillRunsWithCleanOutput() throws Exception {
        assertJson(backup(Map.of()));
        Path archive = cacheDirs().get(0).resolve("agent.jsa");
        assertThat(archive).exists();
        archive.toFile().setWritable(true);
        Files.write(archive, "not an archive".getBytes(StandardCharsets.UTF_8));

        Path target = dir.resolve("r1.img");
        Run r = restore(Map.of(), target);
        assertJson(r);
        assertThat(Images.sameContent(image, target)).isTrue();
    }

    @Test
    void launcher_newJar_newLayoutDayOldOneRemoved() throws Exception {
        assertJson(backup(Map.of()));
        Path old = cacheDirs().get(0);
        Files.setLastModifiedTime(old, FileTime.from(Instant.now().minusSeconds(2 * 86400))); // made two days ago
        Files.setLastModifiedTime(jar, FileTime.from(Instant.now().plusSeconds(5))); // "a new build"

        Path target = dir.resolve("r2.img");
        assertJson(restore(Map.of(), target));
        assertThat(Images.sameContent(image, target)).isTrue();
        assertThat(cacheDirs()).hasSize(1).doesNotContain(old);
        assertThat(cacheDirs().get(0).resolve("agent.jsa")).exists(); // recorded again by that restore
    }

    @Test
    void launcher_staleArchiveFromOtherLayout_stillRuns() throws Exception {
        assertJson(backup(Map.of()));
        Path layout = cacheDirs().get(0);
        // An archive recorded for another class path (here: the fat jar's own) does not match this layout.
        Path foreign = dir.resolve("foreign.jsa");
        Process p = new ProcessBuilder("java", "-XX:ArchiveClassesAtExit=" + foreign, "-jar", jar.toString(), "--version")
                .redirectErrorStream(true).redirectOutput(dir.resolve("dump.txt").toFile()).start();
        assertThat(p.waitFor(2, TimeUnit.MINUTES)).isTrue();
        assertThat(foreign).exists();
        Path archive = layout.resolve("agent.jsa");
        archive.toFile().setWritable(true);
        Files.copy(foreign, archive, java.nio.file.StandardCopyOption.REPLACE_EXISTING);

        Path target = dir.resolve("r3.img");
        assertJson(restore(Map.of(), target));
        assertThat(Images.sameContent(image, target)).isTrue();
    }

    @Test
    void launcher_cacheUnusableOrOff_runsFromTheJar() throws Exception {
        Files.writeString(dir.resolve("blocker"), "a file where the cache directory would go");
        Run r = backup(Map.of("HOLDFAST_AGENT_CACHE", dir.resolve("blocker").resolve("cache").toString()));
        assertJson(r);

        Path target = dir.resolve("r4.img");
        assertJson(restore(Map.of("HOLDFAST_AGENT_CDS", "off"), target));
        assertThat(Images.sameContent(image, target)).isTrue();
        assertThat(cacheDirs()).isEmpty();
    }

    @Test
    void launcher_archiveOfAKilledRecording_removedByTheNextRecording_aLiveOnesKept() throws Exception {
        assertThat(launch(Map.of(), "--version").exit()).isZero(); // unpacks the layout, records no archive
        Path layout = cacheDirs().get(0);
        Path archive = layout.resolve("agent.jsa");
        assertThat(archive).doesNotExist();
        Process gone = new ProcessBuilder("true").start();
        gone.waitFor();
        Process live = new ProcessBuilder("sleep", "120").start();
        try {
            Path killed = Files.write(layout.resolve("agent.jsa." + gone.pid() + ".tmp"), new byte[1000]);
            Path running = Files.write(layout.resolve("agent.jsa." + live.pid() + ".tmp"), new byte[1000]);

            assertJson(backup(Map.of()));

            assertThat(killed).as("its script is gone").doesNotExist();
            assertThat(running).as("its script still runs").exists();
            assertThat(archive).exists();
        } finally {
            live.destroyForcibly().waitFor();
        }
    }
}
