package org.holdfast.server.ingest.cluster;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * Waits until another thread has reached a point, seen in its stack: for a test whose next step must
 * come after it (a fixed sleep is not enough on a loaded machine, and the step then tests nothing or fails).
 */
final class ThreadsAt {
    private static final long WAIT_SECONDS = 30;

    private ThreadsAt() {
    }

    /** Waits until a thread running code of {@code where} is blocked on {@code lock}'s monitor (a {@code synchronized} held elsewhere). */
    static void blockedOn(Object lock, Class<?> where) throws InterruptedException {
        int id = System.identityHashCode(lock);
        await("a thread in " + where.getSimpleName() + " waiting for the lock of " + lock.getClass().getSimpleName(),
                t -> t.getThreadState() == Thread.State.BLOCKED && t.getLockInfo() != null && t.getLockInfo().getIdentityHashCode() == id
                        && runs(t, where, null));
    }

    /** Waits until a thread is inside {@code where.method} (any overload). */
    static void inMethod(Class<?> where, String method) throws InterruptedException {
        await("a thread in " + where.getSimpleName() + "." + method, t -> runs(t, where, method));
    }

    private static boolean runs(ThreadInfo t, Class<?> where, String method) {
        return Arrays.stream(t.getStackTrace())
                .anyMatch(f -> f.getClassName().equals(where.getName()) && (method == null || f.getMethodName().equals(method)));
    }

    private static void await(String what, Predicate<ThreadInfo> seen) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (true) {
            for (ThreadInfo t : ManagementFactory.getThreadMXBean().dumpAllThreads(false, false)) {
                if (seen.test(t)) {
                    return;
                }
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no sign of " + what + " after " + WAIT_SECONDS + " s");
            }
            Thread.sleep(5);
        }
    }
}
