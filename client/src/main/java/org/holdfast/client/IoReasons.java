package org.holdfast.client;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * Turns an operating-system failure into the words an administrator knows ("permission denied",
 * "device or resource busy") and what to do about it, so that no message shows a Java exception
 * name or a bare path where the reason belongs.
 *
 * <p>Java reports the kernel's reason in three shapes: a typed exception with no reason
 * ({@link AccessDeniedException}, {@link NoSuchFileException}), a {@link FileSystemException} whose
 * reason is the strerror text, and a plain {@link IOException} (or {@link FileNotFoundException}
 * from {@code RandomAccessFile}) whose message is the strerror text, possibly after the path in
 * parentheses. All three are matched against one table.
 */
public final class IoReasons {
    /** A reason as the C library words it, lower case, and the advice that goes with it ({@code %s} is the path). */
    private record Reason(String text, String advice) {
    }

    private static final List<Reason> KNOWN = List.of(
            new Reason("permission denied", "check the permissions of %s and its directory, or run as a user allowed"
                    + " to use it (block devices usually need root)"),
            new Reason("operation not permitted", "run as a user allowed to use %s (block devices usually need root),"
                    + " or check its attributes (lsattr)"),
            new Reason("no such file or directory", "check the path %s: it, or a directory on the way to it, does not exist"),
            new Reason("device or resource busy", "%s is in use (mounted, or held open exclusively by another program):"
                    + " unmount it or stop that program, then retry"),
            new Reason("no space left on device", "free space on the file system of %s (df -h), or use another place"),
            new Reason("disk quota exceeded", "this user's disk quota is used up on the file system of %s: free some,"
                    + " or use another place"),
            new Reason("read-only file system", "%s is on a read-only file system: remount it read-write or use another place"),
            new Reason("is a directory", "%s is a directory: name a file or a block device"),
            new Reason("not a directory", "a part of the path %s is a file, not a directory: check the path"),
            new Reason("input/output error", "the disk under %s reported an I/O error: check the kernel log (dmesg) and"
                    + " the disk's health before retrying"),
            new Reason("too many open files", "raise this user's open-file limit (ulimit -n), then retry"),
            new Reason("file exists", "%s exists already: remove it or choose another name"),
            new Reason("directory not empty", "%s is a directory that is not empty: empty or remove it first"),
            new Reason("no such device", "%s names a device that is not there (unplugged or detached): check the path"),
            new Reason("file too large", "the file system of %s cannot hold a file this large: use another file system"),
            new Reason("connection refused", "nothing listens on %s: check that the server is running and that --server"
                    + " names its agent port (7070 by default)"),
            new Reason("connection timed out", "%s did not answer: check the address, and that no firewall drops the"
                    + " agent port"),
            new Reason("no route to host", "%s cannot be reached from here: check the address, routing and firewalls"),
            new Reason("network is unreachable", "this machine has no route to %s: check its network configuration"),
            new Reason("connection reset", "%s dropped the connection: check the server's log, then retry"));

    private IoReasons() {
    }

    /** The operating system's reason for {@code e}, in lower case without path or class name. */
    public static String reason(IOException e) {
        if (e instanceof AccessDeniedException) {
            return "permission denied";
        }
        if (e instanceof NoSuchFileException) {
            return "no such file or directory";
        }
        if (e instanceof NotDirectoryException) {
            return "not a directory";
        }
        if (e instanceof FileAlreadyExistsException) {
            return "file exists";
        }
        if (e instanceof DirectoryNotEmptyException) {
            return "directory not empty";
        }
        String text = e instanceof FileSystemException fs && fs.getReason() != null ? fs.getReason() : e.getMessage();
        if (text == null || text.isBlank()) {
            return "failed (" + e.getClass().getSimpleName() + ")";
        }
        String lower = text.toLowerCase(Locale.ROOT);
        for (Reason r : KNOWN) {
            if (lower.contains(r.text)) {
                return r.text;
            }
        }
        // RandomAccessFile words it "PATH (Reason)": keep the reason
        int open = text.lastIndexOf(" (");
        if (e instanceof FileNotFoundException && text.endsWith(")") && open >= 0) {
            return text.substring(open + 2, text.length() - 1).toLowerCase(Locale.ROOT);
        }
        return text;
    }

    /** What to do next about {@code e} on {@code path}; {@code fallback} if the reason is not a known one. */
    public static String advice(IOException e, Object path, String fallback) {
        String reason = reason(e);
        for (Reason r : KNOWN) {
            if (r.text.equals(reason)) {
                return String.format(Locale.ROOT, r.advice, path);
            }
        }
        return fallback;
    }

    /**
     * The failure to report: {@code "<what> <path>: <reason>"} with the advice for that reason
     * (or {@code fallback}), exit code {@code code}. {@code path} is a file, or a server address.
     */
    public static AgentException failure(ExitCode code, String what, Object path, IOException e, String fallback) {
        return new AgentException(code, what + " " + path + ": " + reason(e), advice(e, path, fallback), e);
    }

    /**
     * An I/O failure that no code path explained (a bug's neighbour, not a bug): a local I/O
     * failure naming the file if Java knows it, never a bare exception.
     */
    public static AgentException unexplained(IOException e) {
        String file = e instanceof FileSystemException fs ? fs.getFile() : null;
        return file == null
                ? new AgentException(ExitCode.LOCAL_IO, "local I/O failed: " + reason(e),
                        advice(e, "the file", "check the files named on the command line; rerun with --debug for details"), e)
                : failure(ExitCode.LOCAL_IO, "local I/O failed on", file, e,
                        "check the files named on the command line; rerun with --debug for details");
    }

    /** {@link #failure} with {@link ExitCode#LOCAL_IO}. */
    public static AgentException localIo(String what, Path path, IOException e, String fallback) {
        return failure(ExitCode.LOCAL_IO, what, path, e, fallback);
    }
}
