package org.holdfast.server.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.util.Comparator;
import java.util.stream.Stream;
import org.holdfast.gc.gma.GmaFormat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real server refuses to start on damaged metadata and says what to run: a GMA chunk whose newest
 * durable frame fails its checksum (the older frame is valid but would lose updates; then the named {@code gc-rebuild} gives a server that starts and lists
 * the volume), and a flipped byte in a catalog table file (the report names the file and the way out).
 */
class ServerDamageAtStartTest {
    private static final int BLOCK = 4096;

    private final LogDir logs = new LogDir("ServerDamageAtStartTest");
    private final AgentProcess agent = new AgentProcess(logs);

    @TempDir
    Path work;

    @Test
    void start_damagedGmaThenDamagedCatalog_refusedNamingTheFileAndTheRepair() throws Exception {
        Path source = work.resolve("volume.img");
        Path state = Files.createDirectories(work.resolve("state"));
        VolumeImage.generate(11, 2 << 20).writeTo(source);
        try (ServerProcess server = ServerProcess.start(work.resolve("server"), "exact", logs)) {
            agent.backup(server, "vol", source, state, "--block-size", String.valueOf(BLOCK));
            server.close();
            Path data = server.dataDir();
            Path gma = data.resolve("gc").resolve("gma.dat");
            // chunk 0 in place, durable: the double-write journal is empty at rest, so no copy is left
            flip(gma, GmaFormat.chunkOffset(0) + 64);
            assertThatThrownBy(server::start).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("damaged GC metadata found at start").hasMessageContaining("gma.dat")
                    .hasMessageContaining("holdfast-server gc-rebuild --data-dir");

            ByteArrayOutputStream err = new ByteArrayOutputStream();
            int code = org.holdfast.server.gc.GcRebuildToolAccess.run(new String[] {"--data-dir", data.toString()},
                    new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
                    new PrintStream(err, true, StandardCharsets.UTF_8), Clock.systemUTC());
            assertThat(code).as(err.toString(StandardCharsets.UTF_8)).isZero();
            server.start(); // healthy again (DamageAtStartTest reads every block back after the rebuild)
            assertThat(server.get("/api/v1/volumes").body()).contains("\"vol\"");
            server.close();

            Path sst;
            try (Stream<Path> s = Files.list(data.resolve("catalog"))) {
                sst = s.filter(p -> p.toString().endsWith(".sst")).max(Comparator.comparingLong(p -> p.toFile().length())).orElseThrow();
            }
            flip(sst, 20);
            assertThatThrownBy(server::start).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("catalog damaged at start").hasMessageContaining(sst.getFileName().toString())
                    .hasMessageContaining("restore <data-dir>/catalog");
        }
    }

    private static void flip(Path file, long at) throws Exception {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            ch.read(b, at);
            b.put(0, (byte) (b.get(0) ^ 0xFF)).rewind();
            ch.write(b, at);
        }
    }
}
