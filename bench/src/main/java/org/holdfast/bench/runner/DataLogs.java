package org.holdfast.bench.runner;

import java.nio.file.Path;

/** Which files of a Holdfast data directory are data logs (the stored block payloads). */
final class DataLogs {
    private DataLogs() {
    }

    /** A file under a folder named like the data store's logs, or named like a data log. */
    static boolean isDataLog(Path p) {
        for (Path part : p) {
            String s = part.toString();
            if (s.equals("datalog") || s.equals("datalogs") || s.equals("data-logs") || s.equals("blocks")) {
                return true;
            }
        }
        String f = p.getFileName().toString();
        return f.endsWith(".dlog") || f.endsWith(".datalog") || f.startsWith("datalog");
    }
}
