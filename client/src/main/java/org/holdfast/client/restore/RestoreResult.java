package org.holdfast.client.restore;

/** What one verified restore did. */
public record RestoreResult(String volume, long sequence, String target, long volumeBytes, int blockSize, long blocks,
                            long zeroBlocks, long receivedBytes, long writtenBytes, double seconds) {
}
