package org.holdfast.server.e2e;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * One real server shared by the console test classes that need no server settings of their own:
 * a {@code ServerProcess} parameter of a {@code @BeforeAll} method gets it. The first class to ask
 * starts it; it lives in the root context's store, so later classes of the same test JVM get the same
 * process and JUnit stops it when the run ends. A server start costs seconds on a loaded machine, and
 * each class used to pay it. Each sharing class works on volumes, users, tokens and policies of its
 * own names, so no class's assertions see another's changes.
 */
final class SharedConsoleServer implements ParameterResolver {
    /**
     * The settings of the shared server, which every sharing class can live with: verify reads at
     * 4 MB/s, so ConsoleJobsTest can cancel a verify of everything while it runs; no other sharing
     * class verifies.
     */
    static final Map<String, String> SETTINGS = Map.of("holdfast.verify.rate", "4MB");
    /** Per test JVM: each fork runs a shared server of its own, and their log files must not meet. */
    private static final LogDir LOGS = new LogDir("ConsoleShared-" + ProcessHandle.current().pid());
    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(SharedConsoleServer.class);

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == ServerProcess.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        return context.getRoot().getStore(NAMESPACE).getOrComputeIfAbsent(Running.class, k -> Running.start(), Running.class).server;
    }

    /** The shared process and its work directory, both gone when the root store closes. */
    private record Running(Path work, ServerProcess server) implements ExtensionContext.Store.CloseableResource {
        static Running start() {
            try {
                Path work = Files.createTempDirectory("holdfast-console-");
                return new Running(work, ServerProcess.start(work, "sungem", SETTINGS, LOGS));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public void close() throws IOException {
            server.close();
            try (Stream<Path> files = Files.walk(work)) {
                for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }
}
