package org.holdfast.server.store;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * The last verification of each catalog backup, kept beside the backups in {@value #DIR}/ (one small
 * text file per backup id), so that it travels with the backup directory and outlives the server
 * whose catalog it guards. The backup engine ignores the directory. Layout of {@code DIR/<id>}:
 * <pre>
 * version=1
 * verifiedAt=EPOCH_MILLIS
 * checksums=true|false        (false: sizes only)
 * files=N
 * bytes=N
 * damaged=N
 * damagedFile=RELATIVE_NAME   (0..20 lines)
 * problem=TEXT                (0..20 lines)
 * </pre>
 * Written to a temporary name, synced and renamed, so a reader sees a whole record or the previous one.
 */
final class CatalogBackupVerdicts {
    /** The subdirectory of the backup directory the records live in. */
    static final String DIR = "holdfast-verify";
    static final int VERSION = 1;
    /** A record larger than this is not one we wrote. */
    private static final int MAX_BYTES = 64 << 10;

    private CatalogBackupVerdicts() {
    }

    static void write(Path backups, CatalogBackups.Verification v) {
        StringBuilder sb = new StringBuilder();
        sb.append("version=").append(VERSION).append('\n');
        sb.append("verifiedAt=").append(v.atMillis()).append('\n');
        sb.append("checksums=").append(v.checksums()).append('\n');
        sb.append("files=").append(v.files()).append('\n');
        sb.append("bytes=").append(v.bytes()).append('\n');
        sb.append("damaged=").append(v.damaged()).append('\n');
        v.damagedFiles().forEach(f -> sb.append("damagedFile=").append(oneLine(f)).append('\n'));
        v.problems().forEach(p -> sb.append("problem=").append(oneLine(p)).append('\n'));
        Path dir = backups.resolve(DIR);
        Path tmp = dir.resolve(v.id() + ".tmp");
        try {
            Files.createDirectories(dir);
            if (!BackupDirLinks.realDirectory(backups, DIR)) {
                throw new java.nio.file.NotDirectoryException(dir + " is a link or not a directory; the record is not written through it");
            }
            // NOFOLLOW: a link planted under the temporary name must not make us truncate the file it names
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                    StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS)) {
                ch.write(java.nio.ByteBuffer.wrap(sb.toString().getBytes(StandardCharsets.UTF_8)));
                ch.force(true);
            }
            Files.move(tmp, dir.resolve(String.valueOf(v.id())), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            try {
                Files.deleteIfExists(tmp);
            } catch (IOException ignored) {
                // the disk that refused the record may refuse this too; a stray .tmp is never read
            }
            throw StoreException.translate("catalog-backup", dir.toString(), "verification of backup " + v.id(), e);
        }
    }

    private static String oneLine(String s) {
        return s.replace('\n', ' ').replace('\r', ' ');
    }

    /** The records there are, by backup id; an unreadable one is left out (the backup counts as not verified). */
    static Map<Integer, CatalogBackups.Verification> read(Path backups) {
        Map<Integer, CatalogBackups.Verification> out = new TreeMap<>();
        Path dir = backups.resolve(DIR);
        if (!BackupDirLinks.realDirectory(backups, DIR)) {
            return out;
        }
        try (Stream<Path> s = Files.list(dir)) {
            for (Path p : s.toList()) {
                String name = p.getFileName().toString();
                if (name.matches("[1-9][0-9]{0,9}") && Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
                    CatalogBackups.Verification v = parse(Integer.parseInt(name), p);
                    if (v != null) {
                        out.put(v.id(), v);
                    }
                }
            }
        } catch (IOException | java.io.UncheckedIOException | NumberFormatException e) {
            return out;
        }
        return out;
    }

    private static CatalogBackups.Verification parse(int id, Path p) {
        try {
            if (Files.size(p) > MAX_BYTES) {
                return null;
            }
            long at = -1;
            long files = 0;
            long bytes = 0;
            long damaged = -1;
            boolean checksums = false;
            int version = -1;
            List<String> damagedFiles = new ArrayList<>();
            List<String> problems = new ArrayList<>();
            for (String line : Files.readAllLines(p, StandardCharsets.UTF_8)) {
                int eq = line.indexOf('=');
                if (eq < 0) {
                    continue;
                }
                String k = line.substring(0, eq);
                String v = line.substring(eq + 1);
                switch (k) {
                    case "version" -> version = Integer.parseInt(v);
                    case "verifiedAt" -> at = Long.parseLong(v);
                    case "checksums" -> checksums = Boolean.parseBoolean(v);
                    case "files" -> files = Long.parseLong(v);
                    case "bytes" -> bytes = Long.parseLong(v);
                    case "damaged" -> damaged = Long.parseLong(v);
                    case "damagedFile" -> damagedFiles.add(v);
                    case "problem" -> problems.add(v);
                    default -> { } // a later field: ignored
                }
            }
            if (version != VERSION || at < 0 || damaged < 0) {
                return null;
            }
            return new CatalogBackups.Verification(id, at, checksums, files, bytes, damaged, damagedFiles, problems);
        } catch (IOException | RuntimeException e) {
            return null; // a torn or foreign file: the backup shows as not verified, which is the truth
        }
    }

    /** Deletes the records of backups that are gone (purged). */
    static void retain(Path backups, Set<Integer> ids) {
        Path dir = backups.resolve(DIR);
        if (!BackupDirLinks.realDirectory(backups, DIR)) {
            return; // a link in its place leads outside the backups: nothing there is ours to delete
        }
        try (Stream<Path> s = Files.list(dir)) {
            for (Path p : s.toList()) {
                String name = p.getFileName().toString().replace(".tmp", "");
                if (Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS) && (!name.matches("[1-9][0-9]{0,9}") || !ids.contains(Integer.parseInt(name)))) {
                    Files.deleteIfExists(p); // records only: damaged/ holds the files set aside
                }
            }
        } catch (IOException | java.io.UncheckedIOException e) {
            // a stale record names a backup id that is not listed; it is shown nowhere and replaced if the id comes back
        }
    }
}
