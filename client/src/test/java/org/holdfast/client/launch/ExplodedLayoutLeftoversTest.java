package org.holdfast.client.launch;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import org.holdfast.client.LeftoverRules;
import org.holdfast.client.LiveTempFileHolder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A class-data layout half-written by a killed agent goes at the next write; a live writer's stays. */
class ExplodedLayoutLeftoversTest {
    @TempDir
    Path dir;
    final List<String> notices = new ArrayList<>();

    Path fatJar() throws Exception {
        Path jar = dir.resolve("agent-exec.jar");
        try (OutputStream os = Files.newOutputStream(jar); JarOutputStream out = new JarOutputStream(os)) {
            out.putNextEntry(new JarEntry(ExplodedLayout.LIB + "dep.jar"));
            out.write(new byte[100]);
            out.closeEntry();
            out.putNextEntry(new JarEntry(ExplodedLayout.CLASSES + "A.class"));
            out.write(new byte[10]);
            out.closeEntry();
        }
        return jar;
    }

    @Test
    void write_leavesOnlyTheLayout() throws Exception {
        Path cache = Files.createDirectory(dir.resolve("cache"));
        ExplodedLayout.write(fatJar(), cache.resolve("key1"), notices::add);

        assertThat(cache.resolve("key1/agent.jar")).exists();
        assertThat(cache.resolve("key1/lib/dep.jar")).hasSize(100);
        try (var files = Files.list(cache)) {
            assertThat(files).containsExactly(cache.resolve("key1"));
        }
        assertThat(notices).isEmpty();
    }

    @Test
    void write_killedWritersLockAndHalfLayoutRemoved_liveWritersKept() throws Exception {
        Path cache = Files.createDirectory(dir.resolve("cache"));
        Path half = Files.createDirectories(cache.resolve("key1.9876543210.tmp/lib")); // what the killed writer's lock names
        Files.write(half.resolve("dep.jar"), new byte[50]);

        LeftoverRules.check(cache, "key1.", ExplodedLayout.LOCK_SUFFIX,
                () -> ExplodedLayout.removeLeftovers(cache, "key1", notices::add), notices);

        assertThat(cache.resolve("key1.9876543210.tmp")).as("the dead lock's layout").doesNotExist();
        Path unlocked = Files.createDirectories(cache.resolve("key1.55.tmp")); // no lock file: an older agent's, or not ours
        ExplodedLayout.write(fatJar(), cache.resolve("key1"), notices::add);
        assertThat(cache.resolve("key1/agent.jar")).exists();
        assertThat(unlocked).exists();
    }

    @Test
    void write_interruptedBySigterm_nextWriteRemovesTheHalfLayout() throws Exception {
        Path cache = Files.createDirectory(dir.resolve("cache"));
        Path jar = dir.resolve("many-libs-exec.jar");
        try (OutputStream os = Files.newOutputStream(jar); JarOutputStream out = new JarOutputStream(os)) {
            for (int i = 0; i < 5000; i++) { // slow enough to be caught half-way
                out.putNextEntry(new JarEntry(ExplodedLayout.LIB + "dep" + i + ".jar"));
                out.write(new byte[10]);
                out.closeEntry();
            }
        }
        Process writer = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), Writer.class.getName(), jar.toString(), cache.resolve("key1").toString())
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try {
            long deadline = System.nanoTime() + 20_000_000_000L;
            while (writer.isAlive() && System.nanoTime() < deadline && libsWritten(cache) < 100) {
                Thread.sleep(1);
            }
            assertThat(writer.isAlive()).as("the writer is caught half-way").isTrue();
            writer.destroy(); // SIGTERM, as Ctrl-C or systemd stopping the unit: shutdown hooks run
            assertThat(writer.waitFor(20, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        } finally {
            writer.destroyForcibly();
        }

        ExplodedLayout.removeLeftovers(cache, "key1", notices::add);

        try (var files = Files.list(cache)) {
            assertThat(files).as("nothing of the interrupted write stays").isEmpty();
        }
    }

    @Test
    void write_killedWriterOfAnotherKeyLeftItsLayout_removedToo() throws Exception {
        Path cache = Files.createDirectory(dir.resolve("cache"));
        // a launcher killed while another one finished that key: it is never written again
        Files.write(cache.resolve("1234567890-4096.9876543210" + ExplodedLayout.LOCK_SUFFIX), "4242\n".getBytes());
        Files.write(Files.createDirectories(cache.resolve("1234567890-4096.9876543210.tmp/lib")).resolve("dep.jar"), new byte[50]);
        Path other = Files.write(cache.resolve("notalayout.9876543210" + ExplodedLayout.LOCK_SUFFIX), "x".getBytes()); // not the launcher's key
        LiveTempFileHolder.Held live = LiveTempFileHolder.start(cache, "1234567890-4096.", ExplodedLayout.LOCK_SUFFIX, 5);
        try {
            ExplodedLayout.write(fatJar(), cache.resolve("key1"), notices::add);

            assertThat(cache.resolve("1234567890-4096.9876543210.tmp")).as("the dead writer's layout").doesNotExist();
            assertThat(cache.resolve("1234567890-4096.9876543210" + ExplodedLayout.LOCK_SUFFIX)).doesNotExist();
            assertThat(live.file()).as("a live writer's lock").exists();
            assertThat(cache.resolve("key1/agent.jar")).exists();
            assertThat(other).exists();
        } finally {
            live.kill();
        }
    }

    private static long libsWritten(Path cache) {
        try (var layouts = Files.newDirectoryStream(cache, "key1.*.tmp")) {
            long n = 0;
            for (Path layout : layouts) {
                try (var libs = Files.list(layout.resolve("lib"))) {
                    n += libs.count();
                }
            }
            return n;
        } catch (java.io.IOException e) {
            return 0;
        }
    }

    /** Writes a layout in its own process: args fat jar, destination. */
    public static final class Writer {
        public static void main(String[] args) throws Exception {
            ExplodedLayout.write(Path.of(args[0]), Path.of(args[1]));
        }
    }
}
