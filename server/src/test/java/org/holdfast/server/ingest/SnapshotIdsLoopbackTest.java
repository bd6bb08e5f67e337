package org.holdfast.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.protocol.BackupMode;
import org.holdfast.common.protocol.BackupReady;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.FullReason;
import org.holdfast.server.catalog.SequenceFloor;
import org.holdfast.server.catalog.SnapshotRecord;
import org.holdfast.server.security.AccessPrincipal;
import org.holdfast.server.security.Role;
import org.holdfast.server.security.VolumeScope;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * BACKUP_BEGIN from an agent whose state names a newer snapshot than the server's newest (snapshots
 * lost with a catalog restore), on a real loopback server: the next snapshot goes past that sequence,
 * even if the backup that said it never commits; an absurd claim is clamped and a token scoped to
 * another volume moves nothing.
 */
class SnapshotIdsLoopbackTest {
    private static final int BS = 4096;
    private static final String SCOPED = "scoped-secret-token-iiiiiiii";

    @TempDir
    Path dir;

    private IngestHarness harness;

    @BeforeEach
    void start() {
        harness = new IngestHarness(dir);
        harness.tokens().add(SCOPED, new AccessPrincipal("token:scoped", Role.AGENT, new VolumeScope(List.of("mine")), null));
    }

    @AfterEach
    void stop() {
        harness.close();
    }

    private List<Long> sequences(String volume) {
        return harness.catalog().snapshots(new VolumeId(volume)).stream().map(SnapshotRecord::sequence).toList();
    }

    @Test
    void begin_agentStateAhead_fullAndTheNewSnapshotPastItsSequence_evenAfterAnAbandonedBackup() {
        byte[] img = BackupRestoreLoopbackTest.image(1, 16 * BS);
        try (AgentDriver a = harness.agent()) {
            a.hello();
            a.backup("vol", img, BS, true);
            long firstId = a.backup("vol", img, BS, true).snapshotId();
            // the agent's state names vol@5 (vol@3..5 lost with a restore); it gives up after BACKUP_READY
            BackupReady ahead = a.begin("vol", BS, img.length, 5, 77);
            assertThat(ahead.mode()).isEqualTo(BackupMode.FULL);
            assertThat(ahead.fullReason()).isEqualTo(FullReason.BASE_NOT_NEWEST);
            assertThat(ahead.parentSequence()).isEqualTo(2);
            a.send(org.holdfast.common.protocol.Abort.INSTANCE);
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10))
                    .until(() -> !harness.server().volumeLocks().isLocked("vol"));
        }
        try (AgentDriver b = harness.agent()) {
            // another agent (its state at vol@2) backs up first: it must not get vol@3
            b.hello();
            AgentDriver.Backup next = b.backupFromState("vol", img, BS, 2, 0);
            assertThat(next.committed().sequence()).isEqualTo(6);
        }
        assertThat(sequences("vol")).containsExactly(1L, 2L, 6L);
    }

    @Test
    void begin_absurdSequence_clamped_otherVolumesAndScopesUnmoved() {
        byte[] img = BackupRestoreLoopbackTest.image(2, 8 * BS);
        try (AgentDriver a = harness.agent()) {
            a.hello();
            a.backup("vol", img, BS, true);
            a.backup("other", img, BS, true);
            AgentDriver.Backup hostile = a.backupFromState("vol", img, BS, Long.MAX_VALUE, 0);
            assertThat(hostile.committed().sequence()).isEqualTo(2 + SequenceFloor.MAX_AGENT_AHEAD);
            assertThat(a.backup("other", img, BS, true).sequence()).as("another volume goes on one by one").isEqualTo(2);
        }
        try (AgentDriver s = harness.agent(SCOPED)) {
            s.hello();
            s.send(new org.holdfast.common.protocol.BackupBegin("other", BS, img.length, Long.MAX_VALUE));
            assertThat(s.expectErrorAndClose().code()).isEqualTo(ErrorCode.UNAUTHORIZED);
        }
        try (AgentDriver a = harness.agent()) {
            a.hello();
            assertThat(a.backup("other", img, BS, true).sequence()).as("the foreign token moved nothing").isEqualTo(3);
        }
        assertThat(sequences("vol")).containsExactly(1L, 2 + SequenceFloor.MAX_AGENT_AHEAD);
    }
}
