package org.holdfast.client.scan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FilesystemBlockSizeTest {
    @TempDir
    Path dir;

    private Path superblock(int log, int magic) throws Exception {
        ByteBuffer b = ByteBuffer.allocate(4096).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(1024 + 24, log).putShort(1024 + 56, (short) magic);
        Path p = dir.resolve("sb-" + log + "-" + magic);
        Files.write(p, b.array());
        return p;
    }

    @Test
    void ext_superblockWithLogBlockSize_blockSizeInBytes() throws Exception {
        assertThat(FilesystemBlockSize.ext(superblock(0, 0xEF53))).isEqualTo(1024);
        assertThat(FilesystemBlockSize.ext(superblock(2, 0xEF53))).isEqualTo(4096);
    }

    @Test
    void ext_notAnExtFileSystem_zero() throws Exception {
        assertThat(FilesystemBlockSize.ext(superblock(0, 0x1234))).as("other magic").isZero();
        assertThat(FilesystemBlockSize.ext(superblock(40, 0xEF53))).as("absurd block size").isZero();
        byte[] noise = new byte[8192];
        new Random(3).nextBytes(noise);
        noise[1024 + 56] = 0; // not the magic by chance
        Files.write(dir.resolve("noise"), noise);
        assertThat(FilesystemBlockSize.ext(dir.resolve("noise"))).isZero();
        Files.write(dir.resolve("short"), new byte[1500]);
        assertThat(FilesystemBlockSize.ext(dir.resolve("short"))).as("shorter than the superblock").isZero();
        assertThat(FilesystemBlockSize.ext(dir.resolve("missing"))).isZero();
    }

    @Test
    void ext_realMke2fsImages_smallOnesGetOneKibBlocks() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/sbin/mkfs.ext4")) || Files.isExecutable(Path.of("/usr/sbin/mkfs.ext4")),
                "mkfs.ext4 (e2fsprogs) is needed");
        assertThat(FilesystemBlockSize.ext(mkfs("small.img", 8 << 20))).as("mke2fs's 'small' type below 512 MiB").isEqualTo(1024);
        assertThat(FilesystemBlockSize.ext(mkfs("four-k.img", 8 << 20, "-b", "4096"))).isEqualTo(4096);
    }

    private Path mkfs(String name, long size, String... options) throws Exception {
        Path img = dir.resolve(name);
        try (var f = new java.io.RandomAccessFile(img.toFile(), "rw")) {
            f.setLength(size);
        }
        var cmd = new java.util.ArrayList<>(java.util.List.of(Files.isExecutable(Path.of("/sbin/mkfs.ext4")) ? "/sbin/mkfs.ext4" : "/usr/sbin/mkfs.ext4",
                "-q", "-F"));
        cmd.addAll(java.util.List.of(options));
        cmd.add(img.toString());
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(new String(p.getInputStream().readAllBytes())).isZero();
        return img;
    }
}
