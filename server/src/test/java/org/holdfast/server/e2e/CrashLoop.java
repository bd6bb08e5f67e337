package org.holdfast.server.e2e;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.holdfast.common.kill.KillPoint;
import org.holdfast.common.kill.KillPoints;

/**
 * The one crash loop of the process tests, in the spirit of RocksDB's {@code db_crashtest}: start a
 * child JVM on a workload, make it die (SIGKILL at a random moment, or a halt at a named
 * {@link KillPoints kill point} armed with {@value KillPoints#PROPERTY}), then let the test reopen
 * the storage and check it (fsck clean, every committed snapshot restores byte-identical), again and
 * again. It also keeps the kill-point coverage: which points killed a child, reported at the end.
 *
 * <p>Iterations from {@code holdfast.crash.iterations} (each test's short CI default, 100 with
 * {@code -Pslow}); the seed from {@code holdfast.crash.seed} (printed, so a failure can be replayed).
 */
final class CrashLoop {
    /** Where one child died and how. */
    record Kill(int iteration, KillPoint point, boolean halted, long afterMillis) {
        /** True if the armed point was reached and halted the child, false if it was SIGKILLed (random time, or point never reached). */
        boolean atPoint() {
            return point != null && halted;
        }

        String describe() {
            return point == null ? "SIGKILL " + afterMillis + " ms after the workload was ready"
                    : halted ? "halted at kill point " + point.name() : "SIGKILL (kill point " + point.name() + " not reached in time)";
        }
    }

    /** How an iteration chooses its kill. */
    interface KillPolicy {
        /** The point to arm in this iteration, or null for a SIGKILL at a random time. */
        KillPoint choose(int iteration, Random random);

        /** Random times only. */
        static KillPolicy randomTime() {
            return (it, r) -> null;
        }

        /** Every point of {@code points} in turn (so n iterations cover n points), then random ones. */
        static KillPolicy eachInTurn(List<KillPoint> points) {
            return (it, r) -> it <= points.size() ? points.get(it - 1) : points.get(r.nextInt(points.size()));
        }

        /** A random point from {@code points} in half the iterations, a random time in the others. */
        static KillPolicy mixed(List<KillPoint> points) {
            return (it, r) -> r.nextBoolean() ? points.get(r.nextInt(points.size())) : null;
        }
    }

    /** A child-JVM workload: how to start it and when it is ready to be killed at a random time. */
    interface ChildWorkload {
        /** Starts the child for {@code iteration} with the extra JVM options (the armed kill point, if any). */
        Process start(int iteration, List<String> jvmOptions, Path stdout, Path stderr) throws Exception;

        /** True once the child's output shows it is where a random-time kill should land (then 0..maxDelay ms more). */
        boolean ready(String stdout);
    }

    private final String name;
    private final int iterations;
    private final long seed;
    private final Random random;
    private final Map<String, Integer> pointKills = new TreeMap<>();
    private int randomKills;
    private int pointsMissed;

    CrashLoop(String name, int ciIterations) {
        this.name = name;
        this.iterations = Integer.getInteger("holdfast.crash.iterations", ciIterations);
        this.seed = Long.getLong("holdfast.crash.seed", System.nanoTime());
        this.random = new Random(seed);
        System.out.println("[e2e] " + name + ": " + iterations + " iterations, seed " + seed);
    }

    int iterations() {
        return iterations;
    }

    long seed() {
        return seed;
    }

    Random random() {
        return random;
    }

    /** The JVM option that arms {@code point} in a child (its {@code count}-th hit). */
    static String armOption(KillPoint point, int count) {
        return "-D" + KillPoints.PROPERTY + "=" + point.name() + "," + count;
    }

    /**
     * Runs one iteration's child: arms the point {@code policy} chooses (at a random hit, 1 to
     * {@code maxHit}), or kills it 0..{@code maxDelayMillis} ms after {@link ChildWorkload#ready}.
     * Returns when the child is dead; an armed point not reached within {@code timeoutMillis} ends
     * in a SIGKILL and counts as missed.
     */
    Kill runChild(int iteration, ChildWorkload workload, KillPolicy policy, int maxHit, long maxDelayMillis, long timeoutMillis,
                  Path[] out) throws Exception {
        KillPoint point = policy.choose(iteration, random);
        List<String> jvm = new ArrayList<>(List.of("-Xmx256m"));
        if (point != null) {
            jvm.add(armOption(point, 1 + random.nextInt(maxHit)));
        }
        Process child = workload.start(iteration, jvm, out[0], out[1]);
        long t0 = System.nanoTime();
        long deadline = t0 + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        if (point != null) {
            if (!child.waitFor(timeoutMillis, TimeUnit.MILLISECONDS)) {
                ChildJvm.sigkill(child);
                pointsMissed++;
                return new Kill(iteration, point, false, (System.nanoTime() - t0) / 1_000_000);
            }
            if (child.exitValue() != KillPoints.HALT_STATUS) {
                throw new AssertionError("child exited with " + child.exitValue() + " instead of halting at " + point.name() + ": "
                        + ChildJvm.tail(out[1], 4000));
            }
            String err = Files.readString(out[1], StandardCharsets.UTF_8);
            if (!err.contains(KillPoints.HALT_MESSAGE + point.name())) {
                throw new AssertionError("child halted without naming " + point.name() + ": " + ChildJvm.tail(out[1], 4000));
            }
            pointKills.merge(point.name(), 1, Integer::sum);
            return new Kill(iteration, point, true, (System.nanoTime() - t0) / 1_000_000);
        }
        while (!workload.ready(read(out[0]))) {
            if (!child.isAlive()) {
                throw new AssertionError("child died before it was ready: " + ChildJvm.tail(out[1], 4000));
            }
            if (System.nanoTime() > deadline) {
                ChildJvm.sigkill(child);
                throw new AssertionError("child not ready within " + timeoutMillis + " ms: " + ChildJvm.tail(out[0], 2000));
            }
            Thread.sleep(1);
        }
        long readyAt = System.nanoTime();
        Thread.sleep(random.nextLong(maxDelayMillis + 1));
        if (!ChildJvm.sigkill(child)) {
            throw new AssertionError("child exited before the kill: " + ChildJvm.tail(out[1], 4000));
        }
        randomKills++;
        return new Kill(iteration, null, false, (System.nanoTime() - readyAt) / 1_000_000);
    }

    /** Counts a kill the test made itself (a server process halted at a point, or SIGKILLed). */
    void record(KillPoint point, boolean halted) {
        if (point == null) {
            randomKills++;
        } else if (halted) {
            pointKills.merge(point.name(), 1, Integer::sum);
        } else {
            pointsMissed++;
        }
    }

    /** Names of the points that killed a child in this loop. */
    Map<String, Integer> pointKills() {
        return Map.copyOf(pointKills);
    }

    /** Registered points that never killed a child in this loop. */
    List<String> uncovered(Predicate<KillPoint> inScope) {
        return KillPoints.all().stream().filter(inScope).map(KillPoint::name).filter(n -> !pointKills.containsKey(n)).toList();
    }

    /** Prints the coverage line: kills per point, random-time kills, armed points never reached. */
    String report(Predicate<KillPoint> inScope) {
        long scope = KillPoints.all().stream().filter(inScope).count();
        String line = String.format("[e2e] %s kill-point coverage: %d of %d points hit %s; %d random-time kills; %d armed points not"
                + " reached; never hit: %s", name, scope - uncovered(inScope).size(), scope, pointKills, randomKills, pointsMissed,
                uncovered(inScope));
        System.out.println(line);
        return line;
    }

    /**
     * The volume's snapshots as a restarted server lists them (the agent protocol's listing over one
     * connection), or null if the server, started armed at {@code armed}, halted there first: during
     * its start or the listing (its GC redoing the work the last kill interrupted). Any other failure
     * is thrown.
     */
    static List<String> snapshotIdsUnlessHalted(ServerProcess server, String volume, KillPoint armed) throws InterruptedException {
        try {
            return WireProbe.snapshotIds(server, volume);
        } catch (RuntimeException | AssertionError e) {
            if (armed == null || !server.awaitKillPoint(java.time.Duration.ofSeconds(10))) {
                throw e;
            }
            return null;
        }
    }

    private static String read(Path p) {
        try {
            return Files.exists(p) ? Files.readString(p, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
