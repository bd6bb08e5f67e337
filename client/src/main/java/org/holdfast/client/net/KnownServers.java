package org.holdfast.client.net;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;
import org.holdfast.client.GuardedReplace;
import org.holdfast.client.IoReasons;
import org.holdfast.client.StateDirectory;
import org.holdfast.common.tls.CertificateFingerprint;

/**
 * The servers this agent has confirmed, the way ssh's {@code known_hosts} works: one line per server
 * address, {@code HOST:PORT SHA256-FINGERPRINT}. A server is added (or its entry replaced) after a
 * connection that {@code --fingerprint} or {@code --ca-cert} confirmed; later runs without either
 * option accept only the remembered fingerprint. Lines starting with {@code #} are comments.
 */
public final class KnownServers {
    private static final String HEADER = "# Holdfast agent: servers whose TLS certificate was confirmed (address, SHA-256 fingerprint).\n"
            + "# Remove a server's line, or run once with --fingerprint, after its certificate was replaced on purpose.\n";

    private final Path file;

    public KnownServers(Path file) {
        this.file = file;
    }

    /** The file, for messages. */
    public Path file() {
        return file;
    }

    /** The remembered fingerprint of {@code server}, if any. A malformed line is a local I/O failure naming the line. */
    public Optional<CertificateFingerprint> lookup(ServerAddress server) {
        String key = server.toString();
        int n = 0;
        for (String line : lines()) {
            n++;
            String t = line.strip();
            if (t.isEmpty() || t.startsWith("#")) {
                continue;
            }
            String[] parts = t.split("\\s+");
            if (parts.length != 2) {
                throw malformed(n, "expected 'HOST:PORT FINGERPRINT'");
            }
            if (parts[0].equals(key)) {
                try {
                    return Optional.of(CertificateFingerprint.parse(parts[1]));
                } catch (IllegalArgumentException e) {
                    throw malformed(n, e.getMessage());
                }
            }
        }
        return Optional.empty();
    }

    /** Adds or replaces {@code server}'s entry (atomically: a crash leaves the old file or the new one). */
    public void remember(ServerAddress server, CertificateFingerprint fingerprint) {
        String key = server.toString();
        List<String> out = new ArrayList<>();
        boolean replaced = false;
        for (String line : lines()) {
            String[] parts = line.strip().split("\\s+");
            if (!line.strip().startsWith("#") && parts.length >= 1 && parts[0].equals(key)) {
                if (!replaced) {
                    out.add(key + " " + fingerprint);
                    replaced = true;
                }
            } else if (!line.startsWith("#")) {
                out.add(line);
            }
        }
        if (!replaced) {
            out.add(key + " " + fingerprint);
        }
        StringBuilder text = new StringBuilder(HEADER);
        for (String l : out) {
            if (!l.isBlank()) {
                text.append(l).append('\n');
            }
        }
        try {
            StateDirectory.createPrivate(file.toAbsolutePath().getParent());
            GuardedReplace.write(file, text.toString().getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw IoReasons.localIo("cannot write the known-servers file", file, e,
                    "make its directory writable, or name another file with --known-servers");
        }
    }

    /**
     * Removes the temporary copies {@code <file>.<random>.tmp} that agents killed during
     * {@link #remember} left (never a live agent's), one line each to {@code notices}.
     */
    public static void removeLeftovers(Path file, Consumer<String> notices) {
        GuardedReplace.removeLeftovers(file, "an agent writing the known-servers file", notices);
    }

    private List<String> lines() {
        try {
            return Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return List.of();
        } catch (IOException e) {
            throw IoReasons.localIo("cannot read the known-servers file", file, e,
                    "check its permissions, or name another file with --known-servers");
        }
    }

    private AgentException malformed(int line, String what) {
        return new AgentException(ExitCode.LOCAL_IO, "known-servers file " + file + ", line " + line + ": " + what,
                "fix or delete that line");
    }
}
