package org.holdfast.common.concurrent;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/** Waiting for a future so that its failure reaches the caller as it was thrown, not wrapped. */
public final class Futures {
    private Futures() {
    }

    /**
     * {@link CompletableFuture#join()}, rethrowing the cause of a {@link CompletionException} when it
     * is a runtime exception: callers report the failure's own words (a lost worker, a corrupt block),
     * not "java.util.concurrent.CompletionException: ...".
     */
    public static <T> T join(CompletableFuture<T> f) {
        try {
            return f.join();
        } catch (CompletionException e) {
            throw e.getCause() instanceof RuntimeException r ? r : e;
        }
    }
}
