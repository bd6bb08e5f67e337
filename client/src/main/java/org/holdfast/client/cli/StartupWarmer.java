package org.holdfast.client.cli;

import java.util.ArrayList;
import java.util.List;
import org.holdfast.client.net.FrameBuffers;

/**
 * Loads and initialises, on a background thread, what every backup and restore needs after the
 * command line is parsed: Jackson's object mapper, Netty's transport and buffer pool, and zstd's
 * native library. Each run is a fresh JVM, and the main thread spends its first 100 to 150 ms in
 * picocli (whose classes the class-data archive cannot hold); meanwhile the second core does this
 * work instead of the main thread doing it later, in line. Failures are ignored: the main thread
 * initialises the same classes itself and reports any real problem.
 */
final class StartupWarmer {
    /** Classes initialised after the transport's, in this order (the heavy static initialisers first). */
    static final List<String> CLASSES = List.of(
            "com.github.luben.zstd.ZstdDecompressCtx",
            "com.github.luben.zstd.ZstdCompressCtx");

    private StartupWarmer() {
    }

    /** Starts the warm-up for {@code args} (nothing for help, version and unknown commands). Returns the thread, or null. */
    static Thread start(String[] args) {
        if (args.length == 0 || !(args[0].equals("backup") || args[0].equals("restore") || args[0].equals("snapshots"))) {
            return null;
        }
        Thread t = new Thread(StartupWarmer::warm, "holdfast-warmup");
        t.setDaemon(true);
        t.setPriority(Thread.NORM_PRIORITY - 1);
        t.start();
        return t;
    }

    /** Everything warmed: Netty's transport (named by client.net, read here on the warm-up thread) then {@link #CLASSES}. */
    static List<String> classes() {
        List<String> all = new ArrayList<>(FrameBuffers.TRANSPORT_CLASSES);
        all.addAll(CLASSES);
        return all;
    }

    static void warm() {
        ClassLoader loader = StartupWarmer.class.getClassLoader();
        try {
            Output.warm();
            for (String name : classes()) {
                Class.forName(name, true, loader);
            }
        } catch (Throwable ignored) {
            // the main thread meets the same failure, if it is real, and reports it with context
        }
    }
}
