package org.holdfast.bench.runner;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.holdfast.bench.workload.Processes;

/** What the figures were measured on: cores, memory, disk, JDK, load. */
public final class MachineInfo {
    private MachineInfo() {
    }

    /** A description of this machine, with the file system holding {@code out}. */
    public static Map<String, Object> describe(Path out) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("nproc", Runtime.getRuntime().availableProcessors());
        m.put("cpu", firstMatching(Path.of("/proc/cpuinfo"), "model name"));
        m.put("memTotal", firstMatching(Path.of("/proc/meminfo"), "MemTotal"));
        m.put("javaVersion", System.getProperty("java.version") + " (" + System.getProperty("java.vm.name") + ")");
        m.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version"));
        m.put("loadAverage", loadAverage());
        try {
            m.put("disk", Processes.run(List.of("df", "-hT", out.toAbsolutePath().toString()), null).trim());
        } catch (IOException e) {
            m.put("disk", "unknown");
        }
        return m;
    }

    /** The 1, 5 and 15 minute load averages (a shared machine shows here). */
    public static String loadAverage() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).trim();
        } catch (IOException e) {
            return "unknown";
        }
    }

    private static String firstMatching(Path file, String prefix) {
        try {
            for (String line : Files.readAllLines(file)) {
                if (line.startsWith(prefix)) {
                    return line.substring(line.indexOf(':') + 1).trim();
                }
            }
        } catch (IOException e) {
            // Not Linux: leave it unknown.
        }
        return "unknown";
    }
}
