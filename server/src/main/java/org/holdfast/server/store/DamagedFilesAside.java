package org.holdfast.server.store;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The damaged catalog-backup files set aside in {@value CatalogBackupVerdicts#DIR}/{@value #DIR}/ as
 * {@code <name>.<epoch ms>}, and the rule that bounds them: they are kept for a look, but a backup
 * disk that keeps rotting would otherwise fill with them. Before each backup, a file set aside more
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
