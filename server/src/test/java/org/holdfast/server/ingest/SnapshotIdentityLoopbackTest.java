package org.holdfast.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.protocol.BackupMode;
import org.holdfast.common.protocol.FullReason;
import org.holdfast.common.protocol.Committed;
import org.holdfast.server.catalog.SnapshotRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The snapshot identity of protocol 5 on a real loopback server: COMMITTED carries the catalog's
 * random id to a version 5 agent only; BACKUP_BEGIN's base id forces a full backup when it names
 * another snapshot than the server's newest of that sequence, and an unknown id (0, or an agent of
 * version 4) keeps today's rule, the sequence alone.
 */
class SnapshotIdentityLoopbackTest {
    private static final int BS = 4096;

    @TempDir
    Path dir;

    private IngestHarness harness;

    @BeforeEach
    void start() {
        harness = new IngestHarness(dir);
    }

    @AfterEach
    void stop() {
        harness.close();
    }

    private long catalogId(String volume, long sequence) {
        var v = harness.catalog().volume(new VolumeId(volume)).orElseThrow();
        return harness.catalog().snapshot(v, sequence).map(SnapshotRecord::snapshotId).orElseThrow();
    }

    @Test
    void committed_version5Agent_carriesTheCatalogsNonZeroIdNewForEachSnapshot() {
        byte[] img = BackupRestoreLoopbackTest.image(1, 16 * BS);
        try (AgentDriver a = harness.agent()) {
            a.hello();
            Committed first = a.backup("vol", img, BS, true);
            Committed second = a.backup("vol", img, BS, true);
            assertThat(first.snapshotId()).isNotZero().isEqualTo(catalogId("vol", 1));
            assertThat(second.snapshotId()).isNotZero().isEqualTo(catalogId("vol", 2)).isNotEqualTo(first.snapshotId());
        }
    }

    @Test
    void committed_version4Agent_carriesNoId_andItsSequenceAloneDecides() {
        byte[] img = BackupRestoreLoopbackTest.image(2, 16 * BS);
        try (AgentDriver a = harness.agent()) {
            assertThat(a.hello(4).protocolVersion()).isEqualTo(4);
            // the driver's decoder now speaks version 4: an id at the end of COMMITTED would be a BAD_FRAME here
            Committed first = a.backup("vol", img, BS, true);
            assertThat(first.snapshotId()).isZero();
            assertThat(catalogId("vol", 1)).as("the catalog keeps an id even for an old agent's snapshot").isNotZero();
            AgentDriver.Backup next = a.backupFromState("vol", img, BS, 1, 0);
            assertThat(next.ready().mode()).isEqualTo(BackupMode.INCREMENTAL);
            assertThat(next.committed().snapshotId()).isZero();
            AgentDriver.Backup behind = a.backupFromState("vol", img, BS, 0, 0);
            assertThat(behind.ready().mode()).isEqualTo(BackupMode.FULL);
            assertThat(behind.ready().fullReason()).as("no reason byte for a version 4 agent").isEqualTo(FullReason.UNSTATED);
        }
    }

    @Test
    void begin_baseIdOfAnotherSnapshotWithTheSameSequence_full() {
        byte[] img = BackupRestoreLoopbackTest.image(3, 16 * BS);
        try (AgentDriver a = harness.agent()) {
            a.hello();
            Committed first = a.backup("vol", img, BS, true);
            AgentDriver.Backup wrong = a.backupFromState("vol", img, BS, 1, first.snapshotId() ^ 1);
            assertThat(wrong.ready().parentSequence()).isEqualTo(1);
            assertThat(wrong.ready().mode()).as("same sequence, another identity").isEqualTo(BackupMode.FULL);
            assertThat(wrong.ready().fullReason()).as("the server says why").isEqualTo(FullReason.IDENTITY_MISMATCH);
            AgentDriver.Backup behind = a.backupFromState("vol", img, BS, 0, 0);
            assertThat(behind.ready().fullReason()).isEqualTo(FullReason.BASE_NOT_NEWEST);
        }
    }

    @Test
    void begin_matchingOrUnknownBaseId_incremental() {
        byte[] img = BackupRestoreLoopbackTest.image(4, 16 * BS);
        try (AgentDriver a = harness.agent()) {
            a.hello();
            Committed first = a.backup("vol", img, BS, true);
            AgentDriver.Backup same = a.backupFromState("vol", img, BS, 1, first.snapshotId());
            assertThat(same.ready().mode()).isEqualTo(BackupMode.INCREMENTAL);
            AgentDriver.Backup unknown = a.backupFromState("vol", img, BS, 2, 0);
            assertThat(unknown.ready().mode()).as("a state file from before protocol 5 keeps today's rule").isEqualTo(BackupMode.INCREMENTAL);
        }
    }
}
