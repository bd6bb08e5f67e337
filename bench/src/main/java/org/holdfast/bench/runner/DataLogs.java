package org.holdfast.bench.runner;

import java.nio.file.Path;

/** Which files of a Holdfast data directory are data logs (the stored block payloads). */
final class DataLogs {
    private DataLogs() {
    }

    /** A data log file: {@code log-XXXXXXXX.hfl} (the server's FormatVersions names them so). */
    static boolean isDataLog(Path p) {
        String f = p.getFileName().toString();
        return f.startsWith("log-") && f.endsWith(".hfl");
    }
}
