package org.holdfast.server.ingest.cluster;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.springframework.util.FileSystemUtils;

/**
 * One {@link DataOnWorkersCluster} with the {@link DataOnWorkersCluster#GC} settings shared by the
 * GC test classes of a test JVM: a {@code DataOnWorkersCluster} parameter of a {@code @BeforeAll}
 * method gets it. The first class to ask starts it; it lives in the root context's store, so later
 * classes of the same JVM get the same cluster and JUnit closes it when the run ends. Three contexts
 * start in seconds on a loaded machine, and each class used to pay that. Each sharing class backs up
 * volumes of its own names and first runs a GC cycle, so it starts with no snapshot past the
 * retention and no unreferenced block left by another. A class that leaves the cluster unusable to
 * the others (lost GC metadata) marks its parameter {@link Spoils}: it gets the cluster for itself
 * (the shared one if it runs, a new one else), and it is closed when that class ends.
 */
public final class SharedGcCluster implements ParameterResolver {
    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(SharedGcCluster.class);

    /** On a {@code DataOnWorkersCluster} parameter: this class spoils the cluster for every later one. */
    @Target(ElementType.PARAMETER)
    @Retention(RetentionPolicy.RUNTIME)
    public @interface Spoils {
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == DataOnWorkersCluster.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        ExtensionContext.Store root = context.getRoot().getStore(NAMESPACE);
        if (!parameter.isAnnotated(Spoils.class)) {
            return root.getOrComputeIfAbsent(Running.class, k -> Running.start(), Running.class).cluster;
        }
        Running taken = root.remove(Running.class, Running.class);
        if (taken == null) {
            taken = Running.start();
        }
        context.getStore(NAMESPACE).put(Running.class, taken); // closed with this class's context
        return taken.cluster;
    }

    /** The cluster and its directory, both gone when the store holding them closes. */
    private record Running(Path dir, DataOnWorkersCluster cluster) implements ExtensionContext.Store.CloseableResource {
        static Running start() {
            try {
                Path dir = Files.createTempDirectory("holdfast-gc-cluster-");
                return new Running(dir, new DataOnWorkersCluster(dir, DataOnWorkersCluster.GC, "sw-1", "sw-2").start());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public void close() throws IOException {
            cluster.close();
            FileSystemUtils.deleteRecursively(dir);
        }
    }
}
