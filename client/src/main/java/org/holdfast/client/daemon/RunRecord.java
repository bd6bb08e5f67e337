package org.holdfast.client.daemon;

/**
 * One line of the run log: a run of a volume's backup, from its pre hook to its post hook.
 *
 * @param volume    the volume
 * @param trigger   {@code schedule}, {@code run-now} or {@code restart} (a run the daemon did not live to finish)
 * @param start     when it began (ISO-8601, UTC)
 * @param end       when it ended
 * @param result    {@code succeeded}, {@code failed} or {@code interrupted}
 * @param attempts  backup tries made (0 when the pre hook failed)
 * @param snapshot  the committed snapshot ({@code volume@sequence}), or null
 * @param bytesRead bytes scanned: the blocks covered, holes and skipped zero regions included (backup --json's bytesRead)
 * @param bytesSent payload bytes sent
 * @param exitCode  the agent exit code of the last try (docs/agent.md, "Exit codes"), 0 on success
 * @param preHook   the pre hook's outcome ({@code exit 0}, {@code exit 3: ...}, {@code timed out ...}), or null
 * @param postHook  the post hook's outcome, or null
 * @param message   what happened, in a sentence
 * @param sourceBytesRead bytes actually read from the source (backup --json's sourceBytesRead); null in records
 *                  written before this field existed
 */
public record RunRecord(String volume, String trigger, String start, String end, String result, int attempts,
                        String snapshot, long bytesRead, long bytesSent, int exitCode, String preHook, String postHook,
                        String message, Long sourceBytesRead) {
    public static final String SUCCEEDED = "succeeded";
    public static final String FAILED = "failed";
    public static final String INTERRUPTED = "interrupted";
}
