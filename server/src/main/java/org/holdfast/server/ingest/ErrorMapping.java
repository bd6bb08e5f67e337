package org.holdfast.server.ingest;

import java.util.concurrent.CompletionException;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ProtocolException;
import org.holdfast.server.catalog.CommitRejectedException;
import org.holdfast.server.catalog.UnknownSnapshotException;
import org.holdfast.server.catalog.UnknownVolumeException;
import org.holdfast.server.engine.DedupUnavailableException;
import org.holdfast.server.store.BlocksUnavailableException;
import org.holdfast.server.store.CorruptBlockException;
import org.holdfast.server.store.StorageFullException;
import org.holdfast.server.store.StoreException;

/**
 * What the agent is told when handling its request failed: the {@link ErrorCode} of the failure
 * and a message that says what to do, never the internals of a server fault (those go to the log).
 */
final class ErrorMapping {
    private ErrorMapping() {
    }

    /** The code an ERROR carries for {@code thrown}; INTERNAL for anything not named here. */
    static ErrorCode codeOf(Throwable thrown) {
        Throwable t = unwrap(thrown);
        if (t instanceof ProtocolException p) {
            return p.code();
        }
        if (t instanceof UnknownVolumeException) {
            return ErrorCode.UNKNOWN_VOLUME;
        }
        if (t instanceof UnknownSnapshotException) {
            return ErrorCode.UNKNOWN_SNAPSHOT;
        }
        if (t instanceof StorageFullException) {
            return ErrorCode.STORAGE_FULL;
        }
        if (t instanceof CorruptBlockException) {
            return ErrorCode.CORRUPT_DATA;
        }
        if (t instanceof DedupUnavailableException || t instanceof BlocksUnavailableException) {
            return ErrorCode.WORKER_UNAVAILABLE; // transient: the agent runs the backup again (an older agent reads INTERNAL)
        }
        if (t instanceof CommitRejectedException c) {
            return switch (c.reason()) {
                case PARENT_MOVED -> ErrorCode.BAD_STATE;
                case BLOCK_SIZE_MISMATCH -> ErrorCode.BLOCK_SIZE_MISMATCH;
                case BAD_ENTRIES -> ErrorCode.BAD_FRAME;
            };
        }
        return ErrorCode.INTERNAL;
    }

    /** The message an ERROR carries for {@code thrown}: a protocol refusal's own text, a generic one for a server fault. */
    static String messageOf(Throwable thrown) {
        Throwable t = unwrap(thrown);
        if (t instanceof ProtocolException p) {
            String m = p.getMessage();
            String prefix = p.code() + ": ";
            return m.startsWith(prefix) ? m.substring(prefix.length()) : m;
        }
        if (t instanceof StorageFullException f) {
            return f.advice() + "; nothing of this backup was committed, and snapshots committed before are intact";
        }
        if (t instanceof CorruptBlockException c) {
            return "damaged block on the server: " + c.getMessage();
        }
        if (t instanceof DedupUnavailableException || t instanceof BlocksUnavailableException) {
            return t.getMessage(); // names the lost worker (or that none is connected) and what to do
        }
        if (t instanceof StoreException || !(t instanceof RuntimeException) || codeOf(t) == ErrorCode.INTERNAL) {
            return "internal server error (" + t.getClass().getSimpleName() + "); see the server log";
        }
        return String.valueOf(t.getMessage());
    }

    /** True if {@code cause} (or a cause of it) is a failed TLS handshake or plain TCP on the TLS port: no frame can reach that peer. */
    static boolean isTlsFailure(Throwable cause) {
        for (Throwable t = cause; t != null; t = t.getCause()) {
            if (t instanceof javax.net.ssl.SSLException || t instanceof io.netty.handler.ssl.NotSslRecordException) {
                return true;
            }
        }
        return false;
    }

    /** The innermost cause's message (its class name if none), cut to 200 characters: for one log line. */
    static String rootMessage(Throwable cause) {
        Throwable t = cause;
        while (t.getCause() != null) {
            t = t.getCause();
        }
        String m = t.getMessage();
        return m == null ? t.getClass().getSimpleName() : m.length() > 200 ? m.substring(0, 200) : m;
    }

    /**
     * What to do about a failed TLS handshake whose innermost message is {@code root}, for the log line:
     * an alert the peer sent means the agent refused this server (most often a pinned fingerprint of a
     * replaced certificate); a record that is not TLS means a client without TLS. Empty if neither.
     */
    static String tlsHint(String root) {
        String r = root.toLowerCase(java.util.Locale.ROOT);
        if (r.contains("alert")) {
            return " (the peer aborted the handshake: an agent does so when it pins, or remembers, the fingerprint of"
                    + " another certificate, e.g. after this one was replaced; its own error names both fingerprints:"
                    + " give it the new one, see operations.md \"TLS\")";
        }
        if (r.contains("not an ssl/tls record")) {
            return " (the peer does not speak TLS: an agent with TLS off, or another program, on the agent port)";
        }
        return "";
    }

    /**
     * The log line's verb for a request stopped by a lost worker: a restore reads blocks from the
     * workers too, and an operator who reads "backup stopped" for it looks for the wrong run.
     */
    static String stoppedRun(boolean backupRunning, boolean restoreRunning) {
        return backupRunning ? "backup stopped" : restoreRunning ? "restore stopped" : "request stopped";
    }

    /** The cause of a {@link CompletionException} (a dedup call to a worker fails with one), else {@code t}. */
    private static Throwable unwrap(Throwable t) {
        return t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
    }
}
