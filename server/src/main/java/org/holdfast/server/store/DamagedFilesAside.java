package org.holdfast.server.store;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The damaged catalog-backup files set aside in {@value CatalogBackupVerdicts#DIR}/{@value #DIR}/ as
 * {@code <name>.<epoch ms>}: moving them there ({@link #setAside}) and the rule that bounds them
 * ({@link #prune}): they are kept for a look, but a backup disk that keeps rotting would otherwise
 * fill with them. Before each backup, a file set aside more
 * than {@value #KEEP_DAYS} days ago, or older than the newest {@value #KEEP_PER_NAME} set aside under
 * the same name, is deleted, unless a kept backup's verification record still names it. The time is
 * the one in the name (a move keeps the table's own modification time). Only regular files directly
 * in that directory are touched: links are not followed, nothing else is deleted, and a name not of
 * this form stays.
 */
final class DamagedFilesAside {
    /** The subdirectory of {@value CatalogBackupVerdicts#DIR} the files are moved to. */
    static final String DIR = "damaged";
    static final int KEEP_DAYS = 7;
    static final int KEEP_PER_NAME = 3;
    private static final Pattern ASIDE = Pattern.compile("(.+)\\.([0-9]{1,18})");
    private static final Pattern SHARED_FILE = Pattern.compile("shared(_checksum)?/[^/]+");
    private static final String STORE = "catalog-backup";

    private DamagedFilesAside() {
    }

    static Path dir(Path backups) {
        return backups.resolve(CatalogBackupVerdicts.DIR).resolve(DIR);
    }

    /** Where {@code file} (a shared table) goes when set aside at {@code nowMillis}. */
    static Path target(Path backups, Path file, long nowMillis) {
        return dir(backups).resolve(file.getFileName() + "." + nowMillis);
    }

    /**
     * Moves the shared files that the {@code recorded} verifications of backups in {@code ids} found
     * damaged, and that still fail their check, into {@value CatalogBackupVerdicts#DIR}/{@value #DIR}/
     * and reopens {@code engine}: a shared table that rotted would otherwise stay in every later backup
     * (the engine copies a table only if its file is not there), so the next backup copies it afresh
     * from the catalog. The engine then finds the backups that held it incomplete; they could not be
     * restored anyway, and they are deleted. Returns the files moved (relative names). The caller holds
     * the engine's monitor and the backups' write lock.
     */
    static List<String> setAside(Path backups, CatalogBackupEngine engine, Map<Integer, CatalogBackups.Verification> recorded,
                                 Set<Integer> ids) {
        Set<String> damaged = new TreeSet<>();
        for (CatalogBackups.Verification v : recorded.values()) {
            if (!v.sound() && ids.contains(v.id())) {
                for (String f : CatalogBackupCheck.stillDamaged(backups, v.id(), v.damagedFiles())) {
                    // a shared table, a file directly in shared/ or shared_checksum/: never a directory, never a private file
                    if (SHARED_FILE.matcher(f).matches()) {
                        damaged.add(f);
                    }
                }
            }
        }
        if (damaged.isEmpty()) {
            return List.of();
        }
        Path aside = dir(backups);
        engine.reopenAround(() -> move(backups, aside, damaged));
        engine.deleteCorrupted();
        // the logger of the class operators know the messages by
        System.getLogger(CatalogBackups.class.getName()).log(System.Logger.Level.WARNING, "set aside damaged catalog backup files "
                + damaged + " in " + aside + "; the backups that held them are deleted, the next backup copies their tables afresh");
        return List.copyOf(damaged);
    }

    private static void move(Path backups, Path aside, Set<String> damaged) {
        try {
            Files.createDirectories(aside);
            if (!BackupDirLinks.realDirectory(backups, CatalogBackupVerdicts.DIR + "/" + DIR)) {
                throw new java.nio.file.NotDirectoryException(aside + " (a link or a file, planted since the check: nothing is moved)");
            }
            for (String f : damaged) {
                // reached through no link (a linked shared_checksum/ would hand us a file elsewhere); a missing
                // file needs only the engine to look again
                Path from = BackupDirLinks.inside(backups, f);
                if (from != null && Files.isRegularFile(from, LinkOption.NOFOLLOW_LINKS)) {
                    Files.move(from, target(backups, from, System.currentTimeMillis()));
                }
            }
        } catch (IOException e) {
            throw StoreException.translate(STORE, aside.toString(), null, e);
        }
    }

    /**
     * Bounds the files set aside ({@link #prune} at the current time): those the {@code recorded}
     * verification of a backup in {@code ids} names as damaged stay. Logs what it deleted.
     */
    static void pruneFor(Path backups, Map<Integer, CatalogBackups.Verification> recorded, Set<Integer> ids) {
        Set<String> named = new HashSet<>();
        recorded.forEach((id, v) -> {
            if (ids.contains(id)) {
                v.damagedFiles().forEach(f -> named.add(f.substring(f.lastIndexOf('/') + 1)));
            }
        });
        List<String> deleted = prune(backups, named, System.currentTimeMillis());
        if (!deleted.isEmpty()) {
            System.getLogger(CatalogBackups.class.getName()).log(System.Logger.Level.INFO, "deleted damaged catalog backup files set aside"
                    + " more than " + KEEP_DAYS + " days ago or beyond the newest " + KEEP_PER_NAME
                    + " of their name: " + deleted + " in " + dir(backups));
        }
    }

    /**
     * Deletes what the rule lets go at {@code nowMillis}; {@code named} are the file names (last
     * component) kept backups' records name as damaged. Returns the names deleted. Best effort: a file
     * that cannot be deleted stays for the next backup.
     */
    static List<String> prune(Path backups, Set<String> named, long nowMillis) {
        Path verify = backups.resolve(CatalogBackupVerdicts.DIR);
        Path dir = dir(backups);
        // a link in place of either directory leads outside the backup directory: not ours to delete in
        if (!Files.isDirectory(verify, LinkOption.NOFOLLOW_LINKS) || !Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            return List.of();
        }
        Map<String, List<Aside>> byName = new HashMap<>();
        try (Stream<Path> s = Files.list(dir)) {
            for (Path p : s.toList()) {
                Matcher m = ASIDE.matcher(p.getFileName().toString());
                if (m.matches() && Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
                    byName.computeIfAbsent(m.group(1), k -> new ArrayList<>()).add(new Aside(p, Long.parseLong(m.group(2))));
                }
            }
        } catch (IOException | java.io.UncheckedIOException e) {
            return List.of(); // unreadable now: the next backup tries again
        }
        long oldest = nowMillis - KEEP_DAYS * 86_400_000L;
        List<String> deleted = new ArrayList<>();
        for (Map.Entry<String, List<Aside>> e : byName.entrySet()) {
            if (named.contains(e.getKey())) {
                continue;
            }
            List<Aside> all = e.getValue();
            all.sort(Comparator.comparingLong(Aside::atMillis).reversed());
            for (int i = 0; i < all.size(); i++) {
                Aside a = all.get(i);
                if (i >= KEEP_PER_NAME || a.atMillis() < oldest) {
                    try {
                        Files.deleteIfExists(a.path());
                        deleted.add(a.path().getFileName().toString());
                    } catch (IOException failed) {
                        // stays until the next backup
                    }
                }
            }
        }
        deleted.sort(null);
        return deleted;
    }

    private record Aside(Path path, long atMillis) {
    }
}
