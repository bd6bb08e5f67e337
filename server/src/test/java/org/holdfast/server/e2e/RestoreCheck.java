package org.holdfast.server.e2e;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import org.holdfast.common.id.SnapshotId;
import org.holdfast.common.id.VolumeId;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Restores a snapshot through the real agent and compares it byte for byte with the image that
 * was backed up, naming the first differing offset and block on failure; or many snapshots at once
 * over one connection of the {@link WireProbe} (no JVM per snapshot).
 */
public final class RestoreCheck {
    private final AgentProcess agent;
    private final Path scratch;
    private int counter;

    public RestoreCheck(AgentProcess agent, Path scratch) {
        this.agent = agent;
        this.scratch = scratch;
    }

    /** Restores {@code snapshotId} of {@code volume} into a fresh file and asserts it equals {@code expected}. */
    public void assertRestores(ServerProcess server, String volume, String snapshotId, Path expected, int blockSize) {
        Path target = scratch.resolve("restore-" + (++counter) + ".img");
        try {
            assertRestoresInto(server, volume, snapshotId, expected, blockSize, target);
        } finally {
            try {
                Files.deleteIfExists(target);
            } catch (IOException ignored) {
                // scratch space; the temp dir goes away with the test
            }
        }
    }

    /**
     * Restores each of {@code expected} (snapshot id to image) over one connection of the
     * {@link WireProbe}, which checks every block against the fingerprint sent beside it, and
     * compares the image byte for byte.
     */
    public static void assertRestoreOverTheWire(ServerProcess server, String volume, Map<String, Path> expected) {
        try (WireProbe p = new WireProbe(server.ingestPort(), server.clientTls(), server.agentToken())) {
            p.hello();
            for (Map.Entry<String, Path> e : expected.entrySet()) {
                byte[] restored = p.restore(volume, SnapshotId.parse(e.getKey(), new VolumeId(volume)).sequence());
                assertThat(Arrays.mismatch(restored, Files.readAllBytes(e.getValue())))
                        .as("%s@%s restores bit for bit (first difference at byte, -1 = none)", volume, e.getKey()).isEqualTo(-1);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * Restores into {@code target}, which may already hold an image (larger or smaller): the
     * result must be exactly the snapshot, nothing of the old file left past its end.
     */
    public void assertRestoresInto(ServerProcess server, String volume, String snapshotId, Path expected, int blockSize,
                                   Path target) {
        try {
            AgentResult r = agent.restore(server, volume, snapshotId, target, "--force"); // replacing is the point
            assertThat(target).as("restore target of %s@%s: %s", volume, snapshotId, r).exists();
            long mismatch = Files.mismatch(expected, target);
            if (mismatch != -1) {
                long expectedSize = Files.size(expected);
                long actualSize = Files.size(target);
                throw new AssertionError(String.format(
                        "%s snapshot %s does not restore byte-identical: first difference at offset %d (block %d),"
                                + " expected %d bytes, restored %d bytes\n%s",
                        volume, snapshotId, mismatch, mismatch / blockSize, expectedSize, actualSize, r));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
