package org.holdfast.server.e2e;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** A child JVM for {@link ProcessKillTest}: leaves a marker file from its shutdown hook, then waits to be killed. */
public final class KillTarget {
    private KillTarget() {
    }

    public static void main(String[] args) throws Exception {
        Path marker = Path.of(args[0]);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                Files.writeString(marker, "shutdown hook ran");
            } catch (IOException ignored) {
                // the test sees the missing marker
            }
        }));
        System.out.println("ready");
        System.out.flush();
        Thread.sleep(120_000);
    }
}
