package org.holdfast.server.security;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * The {@code admin} user's password file, {@code <data-dir>/initial-admin-password} (mode 0600):
 * written with a fresh random password at first start (no user at all) and by the offline
 * {@code reset-admin}, and deleted once the admin's password is changed. The password goes only into
 * that file, never into a log.
 */
public final class InitialAdmin {
    /** File name in the data directory. */
    public static final String FILE = "initial-admin-password";

    private InitialAdmin() {
    }

    /** On an empty user store, creates {@code admin} with a random password and writes the file; returns its path, or null if users exist. */
    public static Path ensure(UserDirectory users, Path dataDir) {
        synchronized (users) {
            if (!users.isEmpty()) {
                return null;
            }
            return reset(users, dataDir, "system");
        }
    }

    /** Sets a new random password for {@code admin} (creating it if needed) and writes it to the file; returns the file. */
    public static Path reset(UserDirectory users, Path dataDir, String by) {
        String password = Secrets.randomPassword();
        // the file first: a password set but never written would lock the admin out
        Path file = write(dataDir, password);
        users.resetAdmin(password, by);
        return file;
    }

    /**
     * Deletes the file once it no longer holds {@code admin}'s password (changed, or the user
     * deleted): a stale password lying in the data directory misleads whoever reads it next, and a
     * secret that opens nothing any more need not be kept. True if it was deleted.
     */
    public static boolean forgetIfStale(UserDirectory users, Path dataDir) {
        Path file = dataDir.resolve(FILE);
        String password;
        try {
            password = Files.readString(file, StandardCharsets.UTF_8).strip();
        } catch (IOException e) {
            return false; // gone already, or unreadable: nothing to decide on
        }
        try {
            users.checkPassword(UserDirectory.ADMIN, password);
            return false; // still the admin's password: the operator may not have read it yet
        } catch (AuthenticationFailedException changed) {
            // the admin's password is another one now (or admin is gone or disabled)
        }
        try {
            return Files.deleteIfExists(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete the stale admin password file " + file + ": " + e.getMessage()
                    + "; delete it by hand", e);
        }
    }

    private static Path write(Path dataDir, String password) {
        Path file = dataDir.resolve(FILE);
        Path tmp = dataDir.resolve(FILE + ".tmp");
        try {
            Files.deleteIfExists(tmp);
            try {
                Files.createFile(tmp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            } catch (UnsupportedOperationException e) {
                Files.createFile(tmp);
            } catch (FileAlreadyExistsException e) {
                throw new IOException("another process is writing " + tmp, e);
            }
            Files.writeString(tmp, password + "\n", StandardCharsets.UTF_8, StandardOpenOption.TRUNCATE_EXISTING);
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the admin password file " + file + ": " + e.getMessage()
                    + "; check that the data directory is writable", e);
        }
    }
}
