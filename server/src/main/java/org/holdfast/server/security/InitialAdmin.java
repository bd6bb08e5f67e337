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
 * {@code reset-admin}. The password goes only into that file, never into a log.
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
