package org.holdfast.server.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Clock;
import org.holdfast.common.id.VolumeId;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Sequence floors: the layout, commits that go past them, and agents' claims that cannot run away or touch other volumes. */
class SequenceFloorTest {
    private static final VolumeId VM = new VolumeId("vm01");
    private static final VolumeId OTHER = new VolumeId("vm02");
    private static final int BS = 4096;

    @TempDir
    Path dir;

    private MetadataDb db;
    private Catalog catalog;
    private SnapshotCommit commits;

    @BeforeEach
    void open() {
        db = MetadataDb.open(dir);
        catalog = new Catalog(db);
        commits = new SnapshotCommit(catalog, CommitHook.NONE, Clock.systemUTC());
    }

    @AfterEach
    void close() {
        db.close();
    }

    private CommittedSnapshot commit(VolumeId v, long parent, long claimed) {
        SessionMap m = new SessionMap(4);
        m.add(0, 10 + parent);
        return commits.commit(new SnapshotCommit.Request(v, BS, 4L * BS, parent, m, 4L * BS, 1, 1, 0,
                VolumeRecord.DEFAULT_DOMAIN, org.holdfast.common.model.Consistency.UNKNOWN, claimed));
    }

    private long internalId(VolumeId v) {
        return catalog.requireVolume(v).internalId();
    }

    @Test
    void value_matchesGoldenBytes_andCorruptValuesAreRefused() {
        assertThat(SequenceFloor.encode(1002)).containsExactly(1, 0, 0, 0, 0, 0, 0, 0x03, (byte) 0xea);
        assertThat(SequenceFloor.decode(new byte[] {1, 0, 0, 0, 0, 0, 0, 0x03, (byte) 0xea}, "p", 1)).isEqualTo(1002);
        assertThatThrownBy(() -> SequenceFloor.decode(new byte[] {2, 0, 0, 0, 0, 0, 0, 0, 1}, "p", 7))
                .isInstanceOf(CorruptDataException.class).hasMessageContaining("sequence floor").hasMessageContaining("volume 7");
        assertThatThrownBy(() -> SequenceFloor.decode(new byte[] {1, 0, 0}, "p", 7)).isInstanceOf(CorruptDataException.class);
        assertThatThrownBy(() -> SequenceFloor.decode(new byte[] {1, (byte) 0x80, 0, 0, 0, 0, 0, 0, 0}, "p", 7))
                .as("a negative floor").isInstanceOf(CorruptDataException.class);
        // kind 3 of volume-settings, beside the quota of the same volume
        commit(VM, 0, 0);
        new VolumeSettings(db).setQuota(internalId(VM), 5L);
        SequenceFloor.raiseAll(catalog, 1000);
        byte[] key = VolumeSettings.key(internalId(VM), SequenceFloor.KIND);
        assertThat(key).hasSize(9).endsWith(3);
        assertThat(db.get(MetadataDb.Column.VOLUME_SETTINGS, key)).containsExactly(SequenceFloor.encode(1001));
        assertThat(new VolumeSettings(db).quota(internalId(VM))).hasValue(5L);
    }

    @Test
    void raiseAll_thenCommit_newSequencePastTheGap_existingSnapshotsKeepTheirIds_andNoFloorStartsAtOne() {
        long id1 = commit(VM, 0, 0).snapshot().snapshotId();
        long id2 = commit(VM, 1, 0).snapshot().snapshotId();
        assertThat(SequenceFloor.raiseAll(catalog, 1000)).isEqualTo(1);
        assertThat(SequenceFloor.raiseAll(catalog, 1000)).as("a second restore step adds on top").isEqualTo(1);
        db.close();
        open();
        CommittedSnapshot next = commit(VM, 2, 0);
        assertThat(next.snapshot().sequence()).isEqualTo(2003);
        assertThat(catalog.requireVolume(VM).latestSequence()).isEqualTo(2003);
        assertThat(catalog.snapshots(VM)).extracting(SnapshotRecord::sequence).containsExactly(1L, 2L, 2003L);
        assertThat(catalog.snapshot(catalog.requireVolume(VM), 1).orElseThrow().snapshotId()).isEqualTo(id1);
        assertThat(catalog.snapshot(catalog.requireVolume(VM), 2).orElseThrow().snapshotId()).isEqualTo(id2);
        assertThat(commit(VM, 2003, 0).snapshot().sequence()).as("then one by one again").isEqualTo(2004);
        assertThat(commit(OTHER, 0, 0).snapshot().sequence()).as("a volume created since has no floor").isEqualTo(1);
        assertThatThrownBy(() -> SequenceFloor.raiseAll(catalog, -1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> SequenceFloor.raiseAll(catalog, SequenceFloor.MAX_RESTORE_GAP + 1))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void raiseFloor_agentStateAhead_durableBeforeTheCommit_andTheCommitGoesPastIt() {
        commit(VM, 0, 0);
        commit(VM, 1, 0);
        assertThat(commits.raiseFloor(VM, 5)).isEqualTo(5);
        assertThat(commits.raiseFloor(VM, 4)).as("never lowered").isEqualTo(5);
        assertThat(commits.raiseFloor(VM, 2)).as("a claim at the newest sequence changes nothing").isEqualTo(5);
        db.close();
        open();
        assertThat(new SequenceFloor(db).of(internalId(VM))).isEqualTo(5);
        assertThat(commit(VM, 2, 0).snapshot().sequence()).as("vm01@3..5 may be lost snapshots").isEqualTo(6);
    }

    @Test
    void hostileClaims_clampedPastTheNewest_noOverflow_otherVolumesUnmoved() {
        commit(VM, 0, 0);
        commit(OTHER, 0, 0);
        long max = SequenceFloor.MAX_AGENT_AHEAD;
        assertThat(commits.raiseFloor(VM, Long.MAX_VALUE)).isEqualTo(1 + max);
        assertThat(commits.raiseFloor(VM, Long.MAX_VALUE)).as("claims without commits move it no further").isEqualTo(1 + max);
        assertThat(commits.raiseFloor(new VolumeId("unknown"), Long.MAX_VALUE)).as("an unknown volume is left alone").isZero();
        assertThat(catalog.volume(new VolumeId("unknown"))).isEmpty();
        assertThat(new SequenceFloor(db).of(internalId(OTHER))).as("another volume's floor").isZero();
        assertThat(commit(VM, 1, Long.MAX_VALUE).snapshot().sequence()).isEqualTo(2 + max);
        assertThat(commit(OTHER, 1, 0).snapshot().sequence()).as("the other volume goes on one by one").isEqualTo(2);
        // a new volume's first commit with an absurd claim: clamped too
        assertThat(commit(new VolumeId("vm03"), 0, Long.MAX_VALUE).snapshot().sequence()).isEqualTo(max + 1);
        // even a floor at the top of the range (a corrupt-but-readable catalog) gives a positive sequence
        assertThat(SequenceFloor.next(Long.MAX_VALUE - 1, Long.MAX_VALUE)).isPositive();
    }

    @Test
    void raiseFrom_previousCatalogNamesAnInvalidVolume_refusedAsCorrupt_nothingWritten(@TempDir Path previous) {
        VolumeId v = new VolumeId("vm1");
        commit(v, 0, 0);
        try (MetadataDb old = MetadataDb.open(previous)) { // the damaged catalog catalog-restore moved aside
            byte[] value = CatalogKeys.volumeValue(new VolumeRecord(v, 7, BS, 0, 50, 4L * BS));
            old.put(old.handle(MetadataDb.Column.VOLUMES), CatalogKeys.volumeKey(v), value);
            old.put(old.handle(MetadataDb.Column.VOLUMES), "bad name!".getBytes(java.nio.charset.StandardCharsets.UTF_8), value);
        }
        assertThatThrownBy(() -> SequenceFloor.raiseFrom(catalog, previous)).as("catalog-restore takes a CorruptDataException as"
                + " 'could not be read: only the gap keeps their ids'; anything else fails the restore half done")
                .isInstanceOf(CorruptDataException.class).hasMessageContaining("bad name!");
        assertThat(new SequenceFloor(db).of(internalId(v))).isZero();
    }

    @Test
    void floorAtTheCeiling_eachCommitStillTakesANewSequence_noSnapshotOverwritten() {
        long first = commit(VM, 0, 0).snapshot().sequence();
        try (org.holdfast.server.store.MetadataBatch b = new org.holdfast.server.store.MetadataBatch()) {
            new SequenceFloor(db).put(b, internalId(VM), Long.MAX_VALUE / 2); // as from a corrupt-but-readable moved-aside catalog
            catalog.write(b);
        }
        long second = commit(VM, first, 0).snapshot().sequence();
        long third = commit(VM, second, 0).snapshot().sequence();
        assertThat(third).as("a sequence handed out again would overwrite that snapshot's record and map").isGreaterThan(second);
        assertThat(catalog.snapshot(catalog.requireVolume(VM), second)).isPresent();
        assertThat(SequenceFloor.next(third, Long.MAX_VALUE)).isGreaterThan(third);
    }
}
