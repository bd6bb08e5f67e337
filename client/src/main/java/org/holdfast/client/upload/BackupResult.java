package org.holdfast.client.upload;

import java.nio.file.Path;
import org.holdfast.client.progress.Sizes;

/**
 * What one committed backup did. {@code changedBlocks}, {@code newBlocks} and {@code storedBytes}
 * are the server's counts from COMMITTED; the rest are the agent's. {@code bytesRead} counts the
 * blocks scanned, {@code sourceBytesRead} the bytes actually read from the source, and
 * {@code holeBytes} those of blocks skipped as holes without reading; {@code framedBlocks} the
 * sent blocks that travelled inside compressed frames (protocol 4). {@code changeHash} is how
 * changed blocks were found ("xxh128" or "sha256"), {@code rehashReason} why every block read got
 * its SHA-256 (null when blocks with an unchanged cheap hash kept their stored one) and
 * {@code sha256Blocks} how many blocks were SHA-256 hashed. {@code sizeChange} is null unless the
 * source's size differs from the volume's last snapshot as the state file knows it.
 */
public record BackupResult(String volume, long sequence, long createdAtMillis, String mode, String fullReason,
                           long volumeBytes, int blockSize, long logicalBytes, long blocksRead, long bytesRead,
                           long entriesSent, long changedBlocks, long sentBlocks, long sentBytes, long newBlocks,
                           long storedBytes, double seconds, boolean stateSaved, long sourceBytesRead,
                           long holeBytes, long framedBlocks, String changeHash, String rehashReason, long sha256Blocks,
                           SizeChange sizeChange) {
    /** The volume's last snapshot {@code fromSequence} was {@code fromBytes}; this backup's source is {@code toBytes}. */
    public record SizeChange(long fromSequence, long fromBytes, long toBytes) {
        /** The warning line: a resize is legitimate, a wrong --source is not, and only the user can tell. */
        public String warning(String volume, Path source, long newSequence) {
            return "warning: volume " + volume + " was " + Sizes.format(fromBytes) + " at snapshot " + volume + "@" + fromSequence
                    + ", the source " + source + " is " + Sizes.format(toBytes) + ": if this is the wrong source, delete snapshot "
                    + volume + "@" + newSequence;
        }
    }
}
