package org.holdfast.client.upload;

/**
 * What one committed backup did. {@code changedBlocks}, {@code newBlocks} and {@code storedBytes}
 * are the server's counts from COMMITTED; the rest are the agent's. {@code bytesRead} counts the
 * blocks scanned, {@code sourceBytesRead} the bytes actually read from the source, and
 * {@code holeBytes} those of blocks skipped as holes without reading; {@code framedBlocks} the
 * sent blocks that travelled inside compressed frames (protocol 4).
 */
public record BackupResult(String volume, long sequence, long createdAtMillis, String mode, String fullReason,
                           long volumeBytes, int blockSize, long logicalBytes, long blocksRead, long bytesRead,
                           long entriesSent, long changedBlocks, long sentBlocks, long sentBytes, long newBlocks,
                           long storedBytes, double seconds, boolean stateSaved, long sourceBytesRead,
                           long holeBytes, long framedBlocks) {
}
