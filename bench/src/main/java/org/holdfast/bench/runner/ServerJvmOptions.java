package org.holdfast.bench.runner;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The server's JVM options from {@code server/bin/jvm.options}, read as the launcher
 * (server/bin/holdfast-server) reads them, so the bench starts the server the way a user does.
 */
public final class ServerJvmOptions {
    private ServerJvmOptions() {
    }

    /**
     * The file's options followed by {@code extra}, which come later and so win; a collector among
     * {@code extra} replaces the file's (the JVM refuses two). Without a file, {@code extra} alone.
     */
    public static List<String> forJar(Path jar, List<String> extra) throws IOException {
        List<String> all = new ArrayList<>();
        Optional<Path> file = find(jar);
        if (file.isPresent()) {
            all.addAll(parse(Files.readAllLines(file.get()), extra.stream().anyMatch(o -> o.contains("GC"))));
        }
        all.addAll(extra);
        return all;
    }

    /** One option a line; '#' starts a comment; the file's collector is dropped when another is chosen. */
    static List<String> parse(List<String> lines, boolean collectorChosen) {
        List<String> options = new ArrayList<>();
        for (String line : lines) {
            int hash = line.indexOf('#');
            String o = (hash < 0 ? line : line.substring(0, hash)).strip();
            if (o.isEmpty() || (collectorChosen && o.startsWith("-XX:+Use") && o.endsWith("GC"))) {
                continue;
            }
            options.add(o);
        }
        return options;
    }

    /** Beside the launcher of the jar's layout (server/target/../bin, lib/../bin), else in a source tree above. */
    static Optional<Path> find(Path jar) {
        List<Path> candidates = new ArrayList<>();
        Path dir = jar.toAbsolutePath().getParent();
        if (dir != null && dir.getParent() != null) {
            candidates.add(dir.getParent().resolve("bin").resolve("jvm.options"));
        }
        Path d = Path.of("").toAbsolutePath();
        for (int up = 0; up < 4 && d != null; up++, d = d.getParent()) {
            candidates.add(d.resolve("server").resolve("bin").resolve("jvm.options"));
        }
        return candidates.stream().filter(Files::isRegularFile).findFirst();
    }
}
