package org.holdfast.bench.runner;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.function.Predicate;
import java.util.stream.Stream;

/** Bytes of the regular files under a directory (apparent sizes, like {@code du -sb}). */
public final class DirectorySize {
    private DirectorySize() {
    }

    /** All regular files under {@code dir}. */
    public static long of(Path dir) throws IOException {
        return of(dir, p -> true);
    }

    /** Regular files under {@code dir} whose path passes {@code filter}; files vanishing meanwhile count 0. */
    public static long of(Path dir, Predicate<Path> filter) throws IOException {
        if (!Files.exists(dir)) {
            return 0;
        }
        for (int attempt = 0; ; attempt++) {
            try {
                return walk(dir, filter);
            } catch (java.io.UncheckedIOException e) {
                // A store deleted a file or folder during the walk (compaction): walk again.
                if (attempt >= 5) {
                    throw e.getCause();
                }
            }
        }
    }

    private static long walk(Path dir, Predicate<Path> filter) throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            return s.filter(filter).mapToLong(p -> {
                try {
                    BasicFileAttributes a = Files.readAttributes(p, BasicFileAttributes.class);
                    return a.isRegularFile() ? a.size() : 0;
                } catch (NoSuchFileException e) {
                    return 0;
                } catch (IOException e) {
                    return 0;
                }
            }).sum();
        }
    }
}
