package org.holdfast.client.scan;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;
import org.holdfast.client.IoReasons;

/**
 * A volume to back up: an image file or a block device, open for reading, with its size. A block
 * device reports size 0 through {@link FileChannel#size()}, so its size comes from
 * {@code /sys/class/block/<dev>/size} (512-byte sectors), as {@code blockdev --getsize64} would.
 */
public record VolumeSource(Path path, FileChannel channel, long size, boolean blockDevice) implements BackupSource {

    /** Opens {@code path} read-only and finds its size. */
    public static VolumeSource open(Path path) {
        try {
            Path real = path.toRealPath();
            boolean device = !Files.isRegularFile(real);
            FileChannel ch = FileChannel.open(real, StandardOpenOption.READ);
            long size = device ? deviceSize(real) : ch.size();
            return new VolumeSource(path, ch, size, device);
        } catch (NoSuchFileException e) {
            throw new AgentException(ExitCode.USAGE, "source " + path + " does not exist", "check --source");
        } catch (IOException e) {
            throw IoReasons.localIo("cannot open source", path, e,
                    "check the path and that this user may read it (block devices usually need root)");
        }
    }

    @Override
    public int read(ByteBuffer dst, long position) throws IOException {
        return channel.read(dst, position);
    }

    @Override
    public DataRegions regions(boolean readHoles) {
        return DataRegions.of(path, size, blockDevice, readHoles);
    }

    static long deviceSize(Path real) throws IOException {
        String name = real.getFileName().toString();
        Path sys = Path.of("/sys/class/block", name, "size");
        if (!Files.exists(sys)) {
            throw new IOException("not a regular file, and no " + sys + " to tell the size of a block device");
        }
        return Long.parseLong(Files.readString(sys).strip()) * 512L;
    }

    @Override
    public void close() {
        try {
            channel.close();
        } catch (IOException ignored) {
            // read-only: nothing to lose
        }
    }
}
