package org.holdfast.client.upload;

import java.util.concurrent.atomic.AtomicReference;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;

/** The first failure of any thread in a session; every waiting thread checks it and gives up. */
final class SessionFailure {
    private final AtomicReference<RuntimeException> first = new AtomicReference<>();

    void fail(Throwable t) {
        RuntimeException e = t instanceof RuntimeException r ? r
                : new AgentException(ExitCode.INTERNAL, "unexpected failure: " + t, null, t);
        // a server's refusal beats the broken connection that followed it (the server closes after ERROR)
        first.getAndUpdate(f -> f == null || isNetwork(f) && e instanceof AgentException a && a.exitCode() != ExitCode.NETWORK ? e : f);
    }

    private static boolean isNetwork(RuntimeException e) {
        return e instanceof AgentException a && a.exitCode() == ExitCode.NETWORK;
    }

    boolean failed() {
        return first.get() != null;
    }

    /** Throws the first failure, if any. */
    void check() {
        RuntimeException e = first.get();
        if (e != null) {
            throw e;
        }
    }
}
