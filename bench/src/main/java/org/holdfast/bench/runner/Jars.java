package org.holdfast.bench.runner;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import java.util.zip.ZipFile;

/**
 * Finds the server's Spring Boot jar and the agent's exec jar: next to the bench in a source tree
 * ({@code server/target}, {@code client/target}), else in the local Maven repository.
 */
public final class Jars {
    private Jars() {
    }

    /** The server's repackaged jar (not the *.original), or empty. */
    public static Optional<Path> server(Path from) {
        return find(from, "server", "holdfast-server-", "");
    }

    /** The agent's exec jar, or empty. */
    public static Optional<Path> agent(Path from) {
        return find(from, "client", "holdfast-client-", "-exec");
    }

    private static Optional<Path> find(Path from, String module, String prefix, String classifier) {
        List<Path> dirs = new ArrayList<>();
        Path d = from.toAbsolutePath();
        for (int up = 0; up < 4 && d != null; up++, d = d.getParent()) {
            dirs.add(d.resolve(module).resolve("target"));
        }
        dirs.add(Path.of(System.getProperty("user.home"), ".m2", "repository", "org", "holdfast",
                prefix.substring(0, prefix.length() - 1)));
        for (Path dir : dirs) {
            Optional<Path> jar = newest(dir, prefix, classifier);
            if (jar.isPresent()) {
                return jar;
            }
        }
        return Optional.empty();
    }

    private static Optional<Path> newest(Path dir, String prefix, String classifier) {
        if (!Files.isDirectory(dir)) {
            return Optional.empty();
        }
        try (Stream<Path> s = Files.walk(dir, 2)) {
            return s.filter(p -> {
                String n = p.getFileName().toString();
                if (!n.startsWith(prefix) || !n.endsWith(classifier + ".jar")) {
                    return false;
                }
                if (classifier.isEmpty() && (n.endsWith("-exec.jar") || n.endsWith("-sources.jar")
                        || n.endsWith("-tests.jar") || n.endsWith("-javadoc.jar"))) {
                    return false;
                }
                return isBootJar(p);
            }).max((a, b) -> Long.compare(a.toFile().lastModified(), b.toFile().lastModified()));
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /** Whether a Spring Boot jar holds the given class among its own classes. */
    public static boolean holdsClass(Path jar, String className) {
        try (ZipFile z = new ZipFile(jar.toFile())) {
            return z.getEntry("BOOT-INF/classes/" + className.replace('.', '/') + ".class") != null;
        } catch (IOException e) {
            return false;
        }
    }

    /** A jar that {@code java -jar} can run: Spring Boot's layout. */
    static boolean isBootJar(Path jar) {
        try (ZipFile z = new ZipFile(jar.toFile())) {
            return z.getEntry("BOOT-INF/") != null || z.getEntry("BOOT-INF/classes/") != null
                    || z.stream().anyMatch(e -> e.getName().startsWith("BOOT-INF/"));
        } catch (IOException e) {
            return false;
        }
    }
}
