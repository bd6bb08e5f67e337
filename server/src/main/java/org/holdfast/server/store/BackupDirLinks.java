package org.holdfast.server.store;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * The catalog backup directory's rule for symbolic links: nothing under it is followed where files
 * are moved or deleted. The directory itself may be a link (an operator's mount point); below it, a
 * link planted in place of a directory the server deletes in (RocksDB's {@code shared/},
 * {@code shared_checksum/}, {@code private/<id>/}, our {@code holdfast-verify/} and its
 * {@code damaged/}) would make a purge or a set-aside delete or move files outside the backups, so
 * such a link stops the work with an error naming it. A link in place of a file is left alone
 * (deleting a link removes only the link).
 */
final class BackupDirLinks {
    /** The engine's directories it deletes files in (private/ holds one directory per backup). */
    private static final List<String> ENGINE_DIRS = List.of("shared", "shared_checksum", "private", "meta");

    private BackupDirLinks() {
    }

    /**
     * {@code relative} resolved under {@code root}, if it stays inside it and no component below
     * {@code root} (the last included) is a symbolic link; else null.
     */
    static Path inside(Path root, String relative) {
        Path p = root.resolve(relative).normalize();
        if (!p.startsWith(root) || p.equals(root)) {
            return null;
        }
        for (Path at = p; !at.equals(root); at = at.getParent()) {
            if (Files.isSymbolicLink(at)) {
                return null;
            }
        }
        return p;
    }

    /** True if {@code relative} under {@code root} is a directory reached through no link below {@code root}. */
    static boolean realDirectory(Path root, String relative) {
        Path p = inside(root, relative);
        return p != null && Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS);
    }

    /**
     * Throws unless every directory the backup engine deletes in is a real directory or absent:
     * checked before each open, purge and delete, since a link may be planted at any time.
     */
    static void requireNoLinkedDirs(Path root) {
        String problem = problem(root);
        if (problem != null) {
            throw new StoreException("catalog-backup", root.toString(), null, problem, null);
        }
    }

    /**
     * What {@link #requireNoLinkedDirs} would refuse, in words naming the link and what to do; null
     * if nothing (read by the health check, so it only looks).
     */
    static String problem(Path root) {
        for (String d : ENGINE_DIRS) {
            String p = linked(root, root.resolve(d));
            if (p != null) {
                return p;
            }
        }
        Path priv = root.resolve("private");
        if (Files.isDirectory(priv, LinkOption.NOFOLLOW_LINKS)) {
            try (Stream<Path> s = Files.list(priv)) {
                for (Path p : s.toList()) {
                    String linked = linked(root, p);
                    if (linked != null) {
                        return linked;
                    }
                }
            } catch (IOException | java.io.UncheckedIOException e) {
                throw StoreException.translate("catalog-backup", priv.toString(), null,
                        e instanceof IOException io ? io : ((java.io.UncheckedIOException) e).getCause());
            }
        }
        String verify = linked(root, root.resolve(CatalogBackupVerdicts.DIR));
        return verify != null ? verify : linked(root, DamagedFilesAside.dir(root));
    }

    private static String linked(Path root, Path p) {
        if (!Files.isSymbolicLink(p)) {
            return null;
        }
        return p + " is a symbolic link; the catalog backups follow no link below " + root + " (through it a purge could"
                + " delete files elsewhere), so nothing was deleted or moved and no catalog backup, verification or purge"
                + " runs until it is gone. Remove the link (and put the directory it replaced back if it was moved), then run"
                + " the backup (POST /api/v1/catalog/backups), verification or restore again; the server need not restart";
    }
}
