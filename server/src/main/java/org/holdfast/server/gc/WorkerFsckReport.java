package org.holdfast.server.gc;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.holdfast.common.id.PbnRange;

/**
 * What {@link WorkerFsck} found on a stopped worker, checked against the master's exported counts.
 * Data loss (a PBN the catalog references that the range store does not hold or whose bytes do not
 * hash to its fingerprint) is checked whatever the marks say; the GMA's counts only when the marks
 * prove the worker logged exactly the deltas the file counts for it ({@link Marks#compared()}).
 * Leaks (stored blocks nobody references) are counted, not errors: a sweep frees them once their
 * expiry passes. {@code routedMark} and {@code outboxEntries} are the file's
 * ({@link WorkerCountsFile#UNKNOWN} if it does not know them).
 */
public record WorkerFsckReport(long workerId, PbnRange range, long fileMark, long workerMark, long routedMark, long outboxEntries,
                               Marks marks, boolean countsLost,
                               long records, long referenced, long blocksRead, long bytesRead, long storedBlocks,
                               Finding missing, Finding corrupt, Finding rcBelow, Finding rcAbove, Finding pinsDiffer,
                               Finding leaks, long millis) {
    /** Exit code: the worker holds every referenced block and its counts agree (leaks allowed). */
    public static final int EXIT_CLEAN = 0;
    /** Exit code: the counts disagree with the file, or are marked lost (bookkeeping errors), no data loss. */
    public static final int EXIT_BOOKKEEPING = 1;
    /** Exit code: a referenced block is missing or corrupt (as fsck's). */
    public static final int EXIT_DATA_LOSS = 2;
    /** Exit code: could not run or refused (bad file, another worker's range, a running worker). */
    public static final int EXIT_COULD_NOT_RUN = 3;
    /** Exit code: no data loss, but the marks differ so the counts were not compared (the advice says what to do). */
    public static final int EXIT_NOT_COMPARABLE = 4;

    /** How the worker's GC log mark relates to the file's and to the master's routed mark. */
    public enum Marks {
        /** The same deltas are in both (as right after worker-gc-import of the file): the counts are compared. */
        EQUAL,
        /**
         * The worker logged every delta the master routed to it (routed mark ≤ its mark) and none the
         * file lacks (its mark ≤ the file's): the master's later operations routed nothing to it, so
         * the file counts exactly its deltas: the counts are compared. The usual case in operation.
         */
        ALL_ROUTED_APPLIED,
        /**
         * The worker's mark is below the file's and below the routed mark, or the routed mark is
         * unknown (a version 1 file, a catalog from before routed marks, a master not stopped
         * cleanly): it may lack deltas the file counts, so the counts are not compared.
         */
        WORKER_BEHIND,
        /** The worker logged deltas the file lacks: the file is older. */
        FILE_OLDER,
        /** The worker has no GC metadata at all. */
        NO_METADATA;

        /**
         * How {@code workerMark} (null: no GC metadata) relates to the file's {@code fileMark} and
         * {@code routedMark} ({@link WorkerCountsFile#UNKNOWN}: unknown, then only equal marks compare).
         */
        static Marks of(Long workerMark, long fileMark, long routedMark) {
            if (workerMark == null) {
                return NO_METADATA;
            }
            if (workerMark == fileMark) {
                return EQUAL;
            }
            if (workerMark > fileMark) {
                return FILE_OLDER;
            }
            return routedMark != WorkerCountsFile.UNKNOWN && routedMark <= workerMark ? ALL_ROUTED_APPLIED : WORKER_BEHIND;
        }

        /** True if these marks let the counts be compared. */
        public boolean compared() {
            return this == EQUAL || this == ALL_ROUTED_APPLIED;
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

    /**
     * True if the counts were compared and disagree, or the worker's GC metadata is marked
     * counts-lost: its counts are known lost whatever the marks say (every sweep of its range is
     * refused until they are rebuilt), so the worker is never "clean" or merely "not compared".
     */
    public boolean bookkeepingErrors() {
        return countsLost || rcBelow.count() > 0 || rcAbove.count() > 0 || pinsDiffer.count() > 0;
    }

    /** The exit code: data loss before bookkeeping errors before counts not compared. */
    public int exitCode() {
        if (dataLoss()) {
            return EXIT_DATA_LOSS;
        }
        if (bookkeepingErrors()) {
            return EXIT_BOOKKEEPING;
        }
        return marks.compared() ? EXIT_CLEAN : EXIT_NOT_COMPARABLE;
    }

    /** What to do about the marks, or null when the counts were compared. */
    public String advice() {
        return switch (marks) {
            case EQUAL, ALL_ROUTED_APPLIED -> null;
            case WORKER_BEHIND -> routedMark == WorkerCountsFile.UNKNOWN ? "the worker's mark " + workerMark + " is below the file's "
                    + fileMark + " and the file does not say which deltas the master routed to this worker (a version 1 file, or"
                    + " the export said why: a master not stopped cleanly with GC healthy, or no delta routed to this worker since"
                    + " its catalog keeps routed marks): the worker may lack deltas the file counts, so the counts were not compared."
                    + " Start the master and this worker so the master sends what waits, stop the worker, then the master, export"
                    + " again (gc-rebuild --worker " + workerId + " --out FILE) and check again (right after worker-gc-import of a"
                    + " file the marks are equal and the counts always compared)"
                    : outboxEntries != 0 ? "the worker's mark " + workerMark + " is below " + routedMark + ", the last delta the master"
                    + " routed to it (" + outboxEntries + " deltas waited in the master's outbox for it at the export): the worker has"
                    + " not logged every delta the file counts, so the counts were not compared. Start the master and this worker,"
                    + " let the outbox drain (the master sends the waiting deltas once the worker is connected; give it a minute),"
                    + " stop the worker, then the master, export again (gc-rebuild --worker " + workerId + " --out FILE) and check"
                    + " again"
                    : "the worker's mark " + workerMark + " is below " + routedMark + ", the last delta the master routed to it,"
                    + " although the master's outbox held nothing for it at the export: the worker acknowledged deltas its GC"
                    + " metadata no longer holds (an older copy of range-data/gc?), so the counts were not compared and cannot be"
                    + " trusted: import this file (worker-gc-import), then check again";
            case FILE_OLDER -> "the file is older than the worker's metadata (its mark " + fileMark + " < the worker's " + workerMark
                    + "): stop the master, export again (gc-rebuild --worker " + workerId + " --out FILE), check again";
            case NO_METADATA -> "the worker has no GC metadata (range-data/gc): import the file (worker-gc-import), then check again";
        };
    }

    /** The marks line's words in parentheses: which case held. */
    private String marksCase() {
        return switch (marks) {
            case EQUAL -> "equal: counts compared";
            case ALL_ROUTED_APPLIED -> "the worker logged every delta routed to it and none after the export: counts compared";
            case WORKER_BEHIND -> routedMark == WorkerCountsFile.UNKNOWN ? "routed deltas unknown: counts NOT compared"
                    : "worker behind the routed mark: counts NOT compared";
            case FILE_OLDER -> "worker ahead of the file: counts NOT compared";
            case NO_METADATA -> "no GC metadata: counts NOT compared";
        };
    }

    /** The report as an operator reads it, in the style of fsck's. */
    public String toText() {
        StringBuilder sb = new StringBuilder();
        sb.append("worker-fsck: worker ").append(workerId).append(", PBNs ").append(range).append(", ").append(records)
                .append(" records, ").append(referenced).append(" referenced blocks, ").append(storedBlocks).append(" stored blocks\n");
        sb.append("  GC delta marks: file ").append(fileMark).append(", worker ")
                .append(marks == Marks.NO_METADATA ? "none" : Long.toString(workerMark)).append(", routed ")
                .append(routedMark == WorkerCountsFile.UNKNOWN ? "unknown" : Long.toString(routedMark))
                .append(outboxEntries == WorkerCountsFile.UNKNOWN ? "" : " (" + outboxEntries + " in the outbox at the export)")
                .append(" (").append(marksCase()).append(")\n");
        if (countsLost) {
            sb.append("  GC metadata marked counts-lost (BOOKKEEPING: its reference counts are known lost, every sweep of this worker is"
                    + " refused): rebuild them from the master's catalog: with the master stopped, gc-rebuild --worker ").append(workerId)
                    .append(" --out FILE; with this worker stopped, worker-gc-import --data-dir <its data dir> --file FILE (docs/"
                    + "operations.md, \"Rebuilding a worker's lost GC metadata\"); then check again with that file\n");
        }
        line(sb, "missing blocks (DATA LOSS)", missing);
        line(sb, "corrupt blocks (DATA LOSS)", corrupt);
        if (marks.compared()) {
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
                + ",\"routedMark\":" + (routedMark == WorkerCountsFile.UNKNOWN ? "null" : routedMark) + ",\"outboxEntries\":"
                + (outboxEntries == WorkerCountsFile.UNKNOWN ? "null" : outboxEntries)
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
