package org.holdfast.server.ingest.cluster;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Semaphore;

/**
 * Asks one worker which of a list of PBNs of its range it holds no record of (freed by its GC): a
 * DATA_READ of each PBN alone, {@value #IN_FLIGHT} in flight at once, so thousands of marks cost
 * about one round trip per {@value #IN_FLIGHT} rather than one each. A PBN counts as not held only
 * if the worker answers {@link DamagedBlockAnswer#notHeld} for exactly it; a sound read, a damaged
 * record, a refusal, a lost link or a timeout all count as held (the caller keeps the mark).
 */
final class NotHeldProbe {
    /** DATA_READs in flight per worker: small answers (a refusal, or one block), far below the link's lane limits. */
    static final int IN_FLIGHT = 64;

    private NotHeldProbe() {
    }

    /** For each of {@code pbns} (in {@code store}'s range), true if its worker answered that it holds no record of it. */
    static boolean[] ask(RemoteRangeStore store, long[] pbns) {
        boolean[] notHeld = new boolean[pbns.length];
        Semaphore window = new Semaphore(IN_FLIGHT);
        List<CompletableFuture<?>> calls = new ArrayList<>(pbns.length);
        for (int i = 0; i < pbns.length; i++) {
            if (!store.isUp()) {
                break; // the link is gone: the rest stay held
            }
            int k = i;
            window.acquireUninterruptibly();
            CompletableFuture<?> call;
            try {
                call = store.readSome(pbns, k, 1);
            } catch (RuntimeException e) {
                window.release();
                break; // could not even send: the rest stay held
            }
            calls.add(call.handle((a, e) -> {
                notHeld[k] = a == null && notHeld(e, pbns[k]);
                window.release();
                return null;
            }));
        }
        CompletableFuture.allOf(calls.toArray(CompletableFuture[]::new)).join(); // each call ends: answered, failed or timed out
        return notHeld;
    }

    private static boolean notHeld(Throwable e, long pbn) {
        Throwable c = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
        return c instanceof RangeBlockDamagedException d && d.answer().pbn() == pbn && d.answer().notHeld();
    }
}
