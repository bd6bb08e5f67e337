package org.holdfast.bench.workload;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/** Formats ext4 images reproducibly and finds where a file's blocks lie inside one. */
final class Ext4Image {
    static final int BLOCK = 4096;

    private Ext4Image() {
    }

    /**
     * A fresh sparse image with an ext4 file system whose UUID, directory hash seed and timestamps
     * come from the seed, so two runs produce the same metadata layout.
     */
    static void format(Path image, long bytes, long seed) throws IOException {
        Files.deleteIfExists(image);
        try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "rw")) {
            f.setLength(bytes);
        }
        String uuid = new UUID(BlockContent.mix(seed), BlockContent.mix(seed + 1)).toString();
        String hashSeed = new UUID(BlockContent.mix(seed + 2), BlockContent.mix(seed + 3)).toString();
        Processes.run(List.of("mkfs.ext4", "-q", "-F", "-b", "4096", "-U", uuid,
                "-E", "hash_seed=" + hashSeed + ",lazy_itable_init=0,lazy_journal_init=0,nodiscard",
                "-L", "bench", image.toString()), null, Map.of("E2FSPROGS_FAKE_TIME", "1767225600"));
    }

    /** Physical block numbers of a file's data, in file order (debugfs "blocks"). */
    static long[] blocksOf(Path image, String path) throws IOException {
        String out = Processes.run(List.of("debugfs", "-R", "blocks \"/" + path + "\"", image.toString()), null);
        String[] parts = out.trim().split("\\s+");
        if (parts.length == 0 || parts[0].isEmpty()) {
            return new long[0];
        }
        long[] blocks = new long[parts.length];
        for (int i = 0; i < parts.length; i++) {
            blocks[i] = Long.parseLong(parts[i]);
        }
        return blocks;
    }
}
