package org.holdfast.server.e2e;

import java.nio.file.Path;
import java.util.List;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Which entries of the test class path a kind of child JVM gets ({@code entries}), and the short run
 * that trains the class-data-sharing archive its children start with ({@link ChildClassArchive}):
 * {@code trainingMain} with {@code trainingJvmOptions} and the arguments {@code trainingArgs} makes
 * of a scratch directory. The run must load the classes a start of such a child loads, then exit.
 */
record ChildClasspath(String name, Predicate<String> entries, String trainingMain, List<String> trainingJvmOptions,
                      Function<Path, List<String>> trainingArgs) implements Predicate<String> {
    @Override
    public boolean test(String entry) {
        return entries.test(entry);
    }
}
