package org.holdfast.server.cluster;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What a worker reports about itself, read cheaply on every heartbeat: the system load average,
 * the JVM heap, and the disk of its data directory. No figure needs more than a system call.
 */
public final class LoadProbe {
    private final Path dataDir;

    public LoadProbe(Path dataDir) {
        this.dataDir = dataDir;
    }

    /** The load now; a figure that cannot be read is -1 (load) or 0 (bytes). */
    public WorkerLoad load() {
        double avg = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
        Runtime rt = Runtime.getRuntime();
        long diskFree;
        try {
            diskFree = Files.getFileStore(dataDir).getUsableSpace();
        } catch (IOException e) {
            diskFree = 0;
        }
        return new WorkerLoad(avg < 0 ? -1 : Math.round(avg * 1000), rt.totalMemory() - rt.freeMemory(), rt.maxMemory(), diskFree);
    }

    /** What this node offers: CPUs, maximum heap, size of the data directory's disk (0 if unreadable). */
    public WorkerCapacity capacity() {
        long disk;
        try {
            disk = Files.getFileStore(dataDir).getTotalSpace();
        } catch (IOException e) {
            disk = 0;
        }
        return new WorkerCapacity(Runtime.getRuntime().availableProcessors(), Runtime.getRuntime().maxMemory(), disk);
    }
}
