package org.holdfast.server.e2e;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.holdfast.server.store.DataLog;

/**
 * Stored bytes (file sizes, as the stored-bytes figure counts them) of a data directory, split into
 * the data logs and the metadata beside them, by part: catalog write-ahead log, catalog tables,
 * SFI snapshot, GC log, and so on.
 */
record DataDirFootprint(long dataLogBytes, Map<String, Long> metadataBytes) {

    /** Measures {@code dataDir}, which no process may be writing. */
    static DataDirFootprint of(Path dataDir) {
        Map<String, Long> parts = new TreeMap<>();
        long logs = 0;
        try (Stream<Path> files = Files.walk(dataDir)) {
            for (Path p : (Iterable<Path>) files.filter(Files::isRegularFile)::iterator) {
                Path rel = dataDir.relativize(p);
                long size = Files.size(p);
                if (rel.getNameCount() == 2 && rel.getName(0).toString().equals("data")
                        && DataLog.parseId(rel.getFileName().toString()) >= 0) {
                    logs += size;
                } else {
                    parts.merge(part(rel), size, Long::sum);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new DataDirFootprint(logs, parts);
    }

    private static String part(Path rel) {
        String top = rel.getName(0).toString();
        String name = rel.getFileName().toString();
        if (rel.getNameCount() == 1) {
            return name;
        }
        return switch (top) {
            case "catalog" -> name.endsWith(".log") ? "catalog/*.log (WAL)" : name.endsWith(".sst") ? "catalog/*.sst"
                    : name.startsWith("LOG") ? "catalog/LOG* (info log)" : "catalog/other";
            case "gc" -> rel.getNameCount() > 2 && rel.getName(1).toString().equals("log") ? "gc/log (BOSC log)" : "gc/other";
            case "sungem" -> "sungem/" + name;
            default -> top + "/";
        };
    }

    long metadataTotal() {
        return metadataBytes.values().stream().mapToLong(Long::longValue).sum();
    }

    /** Metadata as a share of the data logs. */
    double share() {
        return dataLogBytes == 0 ? 0 : (double) metadataTotal() / dataLogBytes;
    }

    /** Metadata of one part (0 if absent). */
    long bytes(String part) {
        return metadataBytes.getOrDefault(part, 0L);
    }

    /** A Markdown table: one row per part, then the totals, with bytes per stored block. */
    String table(String title, long storedBlocks) {
        StringBuilder sb = new StringBuilder("\n" + title + ", " + storedBlocks + " blocks stored\n"
                + "| part | bytes | share of data logs | bytes per stored block |\n| --- | ---: | ---: | ---: |\n");
        metadataBytes.forEach((k, v) -> sb.append(row(k, v, storedBlocks)));
        sb.append(row("**all metadata**", metadataTotal(), storedBlocks));
        sb.append(row("data logs", dataLogBytes, storedBlocks));
        return sb.toString();
    }

    private String row(String name, long bytes, long blocks) {
        return String.format("| %s | %,d | %.2f %% | %.1f |%n", name, bytes, dataLogBytes == 0 ? 0 : 100.0 * bytes / dataLogBytes,
                blocks == 0 ? 0 : (double) bytes / blocks);
    }
}
