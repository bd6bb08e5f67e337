package org.holdfast.client;

/** The agent's process exit codes; documented in the CLI help and docs/agent.md. */
public enum ExitCode {
    /** The backup committed, the restore was verified and written, or the list was printed. */
    OK(0),
    /** A bug or an unexpected condition; rerun with --debug and report the stack trace. */
    INTERNAL(1),
    /**
     * Bad command line or input file (options, changed-blocks list), a server the agent has no way
     * to verify yet, or a restore target that exists and is not empty without --force.
     */
    USAGE(2),
    /** Could not reach the server, or the connection broke or timed out. */
    NETWORK(3),
    /** The server refused the request (unknown volume or snapshot, busy, block size, token, quota). */
    REJECTED(4),
    /** Reading the source, writing the target or the state directory failed. */
    LOCAL_IO(5),
    /**
     * Data failed verification (a restored block does not match its fingerprint), the server broke the protocol,
     * or the server's certificate failed verification (fingerprint mismatch, not trusted by --ca-cert).
     */
    INTEGRITY(6),
    /**
     * The server's disk is full (its free-space reserve is reached): nothing of this backup was committed;
     * free space on the server (delete snapshots or volumes, reclaim-now) or grow its disk, then retry.
     */
    STORAGE_FULL(7),
    /**
     * Transient: the server lost a dedup or data worker this backup (or restore) needed, or has none
     * connected (WORKER_UNAVAILABLE); nothing was committed. Run it again (the agent daemon retries it).
     */
    TRANSIENT(8);

    private final int code;

    ExitCode(int code) {
        this.code = code;
    }

    /** The numeric process exit status. */
    public int code() {
        return code;
    }

    /** The name a failed {@code --json} command gives it in its {@code error} field: {@code transient}, {@code storage-full}. */
    public String jsonName() {
        return name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
    }
}
