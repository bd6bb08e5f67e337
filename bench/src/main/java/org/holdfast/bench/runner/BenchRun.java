package org.holdfast.bench.runner;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Supplier;
import org.holdfast.bench.workload.ImageDigest;
import org.holdfast.bench.workload.Processes;
import org.holdfast.bench.workload.Workload;

/**
 * Runs one workload against several targets: each day the workload changes its images in place,
 * the bench records the ground truth (SHA-256, changed blocks), then every target backs up every
 * volume. After the last day every target restores its chosen snapshots, and each restore is
 * compared byte for byte (by SHA-256) with the image state it was taken from.
 */
public final class BenchRun {
    /** Which snapshots Holdfast restores: every one, or the first, the middle and the last of each volume. */
    public enum RestorePlan { ALL, SAMPLE }

    private final Path out;
    private final RestorePlan plan;
    private final boolean keep;
    private final PrintStream log;
    /** Workloads run so far: offsets the target order so day 0 does not always start with the same target. */
    private int workloadsRun;

    /** A run writing under {@code out}; progress goes to {@code log}. */
    public BenchRun(Path out, RestorePlan plan, boolean keep, PrintStream log) {
        this.out = out;
        this.plan = plan;
        this.keep = keep;
        this.log = log;
    }

    /** Runs {@code workload} against the targets made by the suppliers (fresh instances). */
    public BenchResults.WorkloadResult run(Workload workload, List<Supplier<BackupTarget>> targetFactories)
            throws IOException {
        BenchResults.WorkloadResult result = new BenchResults.WorkloadResult();
        result.name = workload.name();
        int offset = workloadsRun++;
        Path wdir = Files.createDirectories(out.resolve(workload.name()));
        List<BackupTarget> targets = new ArrayList<>();
        Map<BackupTarget, BenchResults.TargetResult> results = new LinkedHashMap<>();
        for (Supplier<BackupTarget> f : targetFactories) {
            BackupTarget t = f.get();
            BenchResults.TargetResult tr = new BenchResults.TargetResult();
            tr.name = t.name();
            tr.describe = t.describe();
            result.targets.add(tr);
            try {
                Path tdir = wdir.resolve(t.name());
                Processes.run(List.of("rm", "-rf", tdir.toString()), null);
                t.open(tdir);
                targets.add(t);
                results.put(t, tr);
            } catch (IOException | RuntimeException e) {
                tr.error = "could not start: " + e.getMessage();
                log.println("bench: " + t.name() + " " + tr.error);
                closeQuietly(t);
            }
        }
        Map<String, ImageDigest> digests = new LinkedHashMap<>();
        Map<String, Map<Integer, ImageDigest.State>> truth = new LinkedHashMap<>();
        for (String v : workload.volumes()) {
            digests.put(v, new ImageDigest());
            truth.put(v, new LinkedHashMap<>());
        }
        try {
            for (int day = 0; day < workload.days(); day++) {
                long g0 = System.nanoTime();
                workload.advance(day);
                result.generationSeconds += (System.nanoTime() - g0) / 1e9;
                long changed = 0;
                long total = 0;
                for (String v : workload.volumes()) {
                    ImageDigest.State s = digests.get(v).digest(workload.image(v));
                    truth.get(v).put(day, s);
                    changed += s.changedBytes();
                    total += s.bytes();
                }
                result.flushSeconds += flush(workload.volumes().stream().map(workload::image).toList());
                log.printf("bench: %s day %d generated (%.1f s so far): %s changed of %s (%.2f %%)%n", workload.name(), day,
                        result.generationSeconds, ReportTable.mib(changed), ReportTable.mib(total), 100.0 * changed / total);
                List<BackupTarget> order = rotated(targets, day + offset);
                result.targetOrder.add(order.stream().map(BackupTarget::name).toList());
                for (BackupTarget t : order) {
                    BenchResults.TargetResult tr = results.get(t);
                    if (tr.error != null) {
                        continue;
                    }
                    try {
                        for (String v : workload.volumes()) {
                            ImageDigest.State s = truth.get(v).get(day);
                            BackupTarget.BackupOutcome o = t.backup(v, day, workload.image(v));
                            long stored = t.storedBytes();
                            tr.snapshots.add(new BenchResults.SnapshotRow(v, day, s.bytes(), s.changedBytes(),
                                    s.zeroBlocks() * 4096L, o.seconds(), o.toolSeconds(), o.clientPeakRssBytes(), o.sentBytes(),
                                    o.newBlocks(), o.duplicateBlocks(s.changedZeroBlocks()), stored, o.snapshotId()));
                            log.printf("bench:   %-16s %-8s day %d backup %6.2f s, stored %s%n", t.name(), v, day,
                                    o.seconds(), ReportTable.mib(stored));
                        }
                    } catch (IOException | RuntimeException e) {
                        tr.error = "backup failed on day " + day + ": " + e.getMessage();
                        log.println("bench: " + t.name() + " " + tr.error);
                    }
                }
            }
            Path restoreFile = wdir.resolve("restore.img");
            // restores interleaved, the targets' order rotating, so no target always restores first or
            // straight after the backups (page cache, machine load)
            Map<BackupTarget, List<Object[]>> jobs = new LinkedHashMap<>();
            int rounds = 0;
            for (BackupTarget t : targets) {
                List<Object[]> list = new ArrayList<>();
                for (String v : workload.volumes()) {
                    for (int day : restoreDays(t instanceof HoldfastTarget, plan, workload.days())) {
                        list.add(new Object[] {v, day});
                    }
                }
                jobs.put(t, list);
                rounds = Math.max(rounds, list.size());
            }
            for (int k = 0; k < rounds; k++) {
                for (BackupTarget t : rotated(targets, k)) {
                    BenchResults.TargetResult tr = results.get(t);
                    List<Object[]> list = jobs.get(t);
                    if (tr.error != null || k >= list.size()) {
                        continue;
                    }
                    String v = (String) list.get(k)[0];
                    int day = (Integer) list.get(k)[1];
                    try {
                        BackupTarget.RestoreOutcome o = t.restore(v, day, restoreFile);
                        String sha = ImageDigest.sha256(restoreFile);
                        ImageDigest.State s = truth.get(v).get(day);
                        boolean same = sha.equals(s.sha256());
                        tr.restores.add(new BenchResults.RestoreRow(v, day, s.bytes(), o.seconds(), o.toolSeconds(),
                                o.clientPeakRssBytes(), same, s.sha256(), sha, o.regionsRead()));
                        log.printf("bench:   %-16s %-8s day %d restore %6.2f s, %s%n", t.name(), v, day, o.seconds(),
                                same ? "identical" : "DIFFERENT (expected " + s.sha256() + ", got " + sha + ")");
                        Files.deleteIfExists(restoreFile);
                    } catch (IOException | RuntimeException e) {
                        tr.error = "restore failed: " + e.getMessage();
                        log.println("bench: " + t.name() + " " + tr.error);
                    }
                }
            }
            for (BackupTarget t : targets) {
                results.get(t).server = new LinkedHashMap<>(t.serverFigures());
            }
        } finally {
            for (BackupTarget t : targets) {
                closeQuietly(t);
            }
            result.describe = workload.describe();
            workload.close();
            if (!keep) {
                cleanUp(wdir, workload);
            }
        }
        for (BenchResults.TargetResult tr : result.targets) {
            tr.summary = TargetSummary.of(tr, result.targets);
        }
        result.comparison = TargetChecks.of(result.targets);
        return result;
    }

    /**
     * Writes the generator's dirty pages back before any clock starts (syncfs of the file systems
     * holding the images), so their writeback is not charged to whichever target goes first.
     */
    static double flush(List<Path> images) throws IOException {
        long t0 = System.nanoTime();
        List<String> cmd = new ArrayList<>(List.of("sync", "-f"));
        for (Path image : images) {
            cmd.add(image.toString());
        }
        Processes.run(cmd, null);
        return (System.nanoTime() - t0) / 1e9;
    }

    /**
     * The days a target restores: Holdfast every day ({@link RestorePlan#ALL}) or the first, the middle
     * and the last; a peer the first and the last. Every target restores the first and the newest
     * snapshot, which issue 14 compares.
     */
    static List<Integer> restoreDays(boolean holdfast, RestorePlan plan, int days) {
        if (holdfast && plan == RestorePlan.ALL) {
            List<Integer> all = new ArrayList<>();
            for (int d = 0; d < days; d++) {
                all.add(d);
            }
            return all;
        }
        return new ArrayList<>(new TreeSet<>(holdfast ? List.of(0, days / 2, days - 1) : List.of(0, days - 1)));
    }

    /** Removes images and repositories; logs stay for diagnosis. */
    private void cleanUp(Path wdir, Workload workload) {
        try {
            for (String v : workload.volumes()) {
                Files.deleteIfExists(workload.image(v));
            }
            try (var s = Files.walk(wdir, 2)) {
                for (Path p : s.toList()) {
                    String n = p.getFileName().toString();
                    if (Files.isDirectory(p) && (n.equals("repo") || n.equals("server") || n.equals("cache") || n.equals("base"))) {
                        Processes.run(List.of("rm", "-rf", p.resolve(n.equals("server") ? "data" : "").toString()), null);
                    }
                }
            }
        } catch (IOException e) {
            log.println("bench: clean-up of " + wdir + " incomplete: " + e.getMessage());
        }
    }

    private static void closeQuietly(BackupTarget t) {
        try {
            t.close();
        } catch (IOException | RuntimeException e) {
            // Closing is best effort once the figures are taken.
        }
    }

    /** {@code targets} starting at index {@code k} modulo their count: each day (or round) another goes first. */
    static <T> List<T> rotated(List<T> targets, int k) {
        List<T> out = new ArrayList<>(targets.size());
        for (int i = 0; i < targets.size(); i++) {
            out.add(targets.get((i + k) % targets.size()));
        }
        return out;
    }
}
