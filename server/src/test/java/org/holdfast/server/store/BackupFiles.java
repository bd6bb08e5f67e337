package org.holdfast.server.store;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/** Test helpers over a catalog backup directory and a data directory on disk: bit rot, and the files as they are. */
public final class BackupFiles {
    private BackupFiles() {
    }

    /** Flips one bit in the middle of the first shared table (by name) of {@code backups}; returns its name relative to it. */
    public static String rot(Path backups) throws Exception {
        String sst = firstSharedTable(backups);
        flip(backups.resolve(sst));
        return sst;
    }

    /** The first shared table (by name) of {@code backups}, relative to it. */
    public static String firstSharedTable(Path backups) throws Exception {
        try (Stream<Path> s = Files.walk(backups.resolve("shared_checksum"))) {
            return backups.relativize(s.filter(p -> p.toString().endsWith(".sst")).sorted().findFirst().orElseThrow()).toString();
        }
    }

    /** Flips one bit in the middle of {@code file}: its size stays. */
    public static void flip(Path file) throws Exception {
        byte[] b = Files.readAllBytes(file);
        b[b.length / 2] ^= 0x01;
        Files.write(file, b);
    }

    /** Every regular file under {@code root} with the SHA-256 of its bytes: what "changed nothing" is checked against. */
    public static Map<String, String> digests(Path root) throws Exception {
        Map<String, String> out = new TreeMap<>();
        try (Stream<Path> s = Files.walk(root)) {
            for (Path p : s.filter(Files::isRegularFile).toList()) {
                out.put(root.relativize(p).toString(),
                        HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(p))));
            }
        }
        return out;
    }
}
