package org.holdfast.server.gc;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.holdfast.common.id.PbnRange;

/**
 * What {@link WorkerFsck} found on a stopped worker, checked against the master's exported counts.
 * Data loss (a PBN the catalog references that the range store does not hold or whose bytes do not
 * hash to its fingerprint) is checked whatever the marks say; the GMA's counts only when the
 * worker's GC log mark equals the file's ({@link Marks#EQUAL}). Leaks (stored blocks nobody
 * references) are counted, not errors: a sweep frees them once their expiry passes.
 */
public record WorkerFsckReport(long workerId, PbnRange range, long fileMark, long workerMark, Marks marks, boolean countsLost,
                               long records, long referenced, long blocksRead, long bytesRead, long storedBlocks,
                               Finding missing, Finding corrupt, Finding rcBelow, Finding rcAbove, Finding pinsDiffer,
                               Finding leaks, long millis) {
    /** Exit code: the worker holds every referenced block and its counts agree (leaks allowed). */
    public static final int EXIT_CLEAN = 0;
    /** Exit code: the counts disagree with the file (bookkeeping errors), no data loss. */
    public static final int EXIT_BOOKKEEPING = 1;
    /** Exit code: a referenced block is missing or corrupt (as fsck's). */
    public static final int EXIT_DATA_LOSS = 2;
    /** Exit code: could not run or refused (bad file, another worker's range, a running worker). */
    public static final int EXIT_COULD_NOT_RUN = 3;
    /** Exit code: no data loss, but the marks differ so the counts were not compared (the advice says what to do). */
    public static final int EXIT_NOT_COMPARABLE = 4;

    /** How the worker's GC log mark relates to the file's. */
    public enum Marks {
        /** The same deltas are in both: the counts are compared. */
        EQUAL,
        /**
         * The worker's mark is below the file's: it may lack deltas the file counts, or the master's
         * last operations routed nothing (or not their last part) to it. The file's mark is the
         * highest id the master's operations could have used, the worker's the highest it logged,
         * and version 1 of the file does not say which ids were routed to the worker, so only
         * {@link #EQUAL} marks prove the same deltas are in both.
         */
        WORKER_BEHIND,
        /** The worker logged deltas the file lacks: the file is older. */
        FILE_OLDER,
        /** The worker has no GC metadata at all. */
        NO_METADATA;

        /** How {@code workerMark} (null: no GC metadata) relates to the file's {@code fileMark}. */
        static Marks of(Long workerMark, long fileMark) {
            if (workerMark == null) {
                return NO_METADATA;
            }
            return workerMark == fileMark ? EQUAL : workerMark < fileMark ? WORKER_BEHIND : FILE_OLDER;
        }
    }

    /** Count and up to {@link #SAMPLES} sample PBNs of one finding. */
    public record Finding(long count, List<Long> samples) {
        /** Samples kept per finding. */
        public static final int SAMPLES = 10;
    }

    /** Collects one finding. */
    static final class Tally {
        private long count;
        private final List<Long> samples = new ArrayList<>();

        void add(long pbn) {
            count++;
            if (samples.size() < Finding.SAMPLES) {
                samples.add(pbn);
            }
        }

        Finding finding() {
            return new Finding(count, List.copyOf(samples));
        }
    }

    /** True if a block the catalog references may not restore. */
    public boolean dataLoss() {
        return missing.count() > 0 || corrupt.count() > 0;
    }

    /** True if the counts were compared and disagree. */
    public boolean bookkeepingErrors() {
        return rcBelow.count() > 0 || rcAbove.count() > 0 || pinsDiffer.count() > 0;
    }

    /** The exit code: data loss before bookkeeping errors before counts not compared. */
    public int exitCode() {
        if (dataLoss()) {
            return EXIT_DATA_LOSS;
        }
        if (bookkeepingErrors()) {
            return EXIT_BOOKKEEPING;
        }
        return marks == Marks.EQUAL ? EXIT_CLEAN : EXIT_NOT_COMPARABLE;
    }

    /** What to do about the marks, or null when they are equal. */
    public String advice() {
        return switch (marks) {
            case EQUAL -> null;
            case WORKER_BEHIND -> "the worker's mark " + workerMark + " is below the file's " + fileMark + ": either the worker has not"
                    + " yet logged every delta the file counts (start it so the master sends them, stop it, check again), or the"
                    + " master's last operations sent it nothing; the file cannot tell which, so the counts were not compared (they"
                    + " are when the marks are equal, as right after worker-gc-import of this file)";
            case FILE_OLDER -> "the file is older than the worker's metadata (its mark " + fileMark + " < the worker's " + workerMark
                    + "): stop the master, export again (gc-rebuild --worker " + workerId + " --out FILE), check again";
            case NO_METADATA -> "the worker has no GC metadata (range-data/gc): import the file (worker-gc-import), then check again";
        };
    }

    /** The report as an operator reads it, in the style of fsck's. */
    public String toText() {
        StringBuilder sb = new StringBuilder();
        sb.append("worker-fsck: worker ").append(workerId).append(", PBNs ").append(range).append(", ").append(records)
                .append(" records, ").append(referenced).append(" referenced blocks, ").append(storedBlocks).append(" stored blocks\n");
        sb.append("  GC delta marks: file ").append(fileMark).append(", worker ")
                .append(marks == Marks.NO_METADATA ? "none" : Long.toString(workerMark))
                .append(marks == Marks.EQUAL ? " (equal: counts compared)\n" : " (differ: counts NOT compared)\n");
        if (countsLost) {
            sb.append("  the worker's GC metadata is marked counts-lost: import the file (worker-gc-import)\n");
        }
        line(sb, "missing blocks (DATA LOSS)", missing);
        line(sb, "corrupt blocks (DATA LOSS)", corrupt);
        if (marks == Marks.EQUAL) {
            line(sb, "RC below the catalog's (DANGEROUS: a sweep may free a referenced block)", rcBelow);
            line(sb, "RC above the catalog's (leak side: kept past its last reference)", rcAbove);
            line(sb, "pin disagreements", pinsDiffer);
        }
        line(sb, "unreferenced stored blocks (leak, not an error)", leaks);
        sb.append("  read ").append(blocksRead).append(" blocks, ").append(bytesRead).append(" bytes in ").append(millis).append(" ms\n");
        String advice = advice();
        if (advice != null) {
            sb.append("  ").append(advice).append('\n');
        }
        sb.append(switch (exitCode()) {
            case EXIT_DATA_LOSS -> "result: DATA LOSS\n";
            case EXIT_BOOKKEEPING -> "result: errors\n";
            case EXIT_NOT_COMPARABLE -> "result: counts not compared\n";
            default -> "result: clean\n";
        });
        return sb.toString();
    }

    /** The report as one JSON object. */
    public String toJson() {
        String advice = advice();
        return "{\"result\":\"" + switch (exitCode()) {
            case EXIT_DATA_LOSS -> "data-loss";
            case EXIT_BOOKKEEPING -> "errors";
            case EXIT_NOT_COMPARABLE -> "not-compared";
            default -> "clean";
        } + "\",\"exitCode\":" + exitCode() + ",\"workerId\":" + workerId + ",\"rangeFirst\":" + range.first() + ",\"rangeLimit\":"
                + range.limit() + ",\"fileMark\":" + fileMark + ",\"workerMark\":" + (marks == Marks.NO_METADATA ? "null" : workerMark)
                + ",\"marks\":\"" + marks.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-') + "\",\"countsLost\":" + countsLost
                + ",\"records\":" + records + ",\"referencedBlocks\":" + referenced + ",\"storedBlocks\":" + storedBlocks
                + ",\"blocksRead\":" + blocksRead + ",\"bytesRead\":" + bytesRead + ",\"missingBlocks\":" + json(missing)
                + ",\"corruptBlocks\":" + json(corrupt) + ",\"rcBelow\":" + json(rcBelow) + ",\"rcAbove\":" + json(rcAbove)
                + ",\"pinsDiffer\":" + json(pinsDiffer) + ",\"leaks\":" + json(leaks) + ",\"advice\":"
                + (advice == null ? "null" : "\"" + GcRebuildTool.jsonEscape(advice) + "\"") + ",\"millis\":" + millis + "}";
    }

    private static String json(Finding f) {
        return "{\"count\":" + f.count() + ",\"samples\":[" + f.samples().stream().map(String::valueOf).collect(Collectors.joining(","))
                + "]}";
    }

    private static void line(StringBuilder sb, String name, Finding f) {
        sb.append("  ").append(name).append(": ").append(f.count());
        if (!f.samples().isEmpty()) {
            sb.append(" e.g. PBN ").append(f.samples());
        }
        sb.append('\n');
    }
}
