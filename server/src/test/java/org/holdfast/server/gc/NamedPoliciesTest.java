package org.holdfast.server.gc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.Random;
import org.holdfast.common.id.VolumeId;
import org.holdfast.gc.check.FsckReport;
import org.holdfast.server.catalog.PolicyStore;
import org.holdfast.server.catalog.SessionMap;
import org.holdfast.server.catalog.SnapshotCommit;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.MetadataBatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Named policies over the real catalog and GC: a name's change reaches every assigned volume (or,
 * under a compliance lock, none), a crash between the name and its volumes is finished at open,
 * and assignments do not outlive their volume.
 */
class NamedPoliciesTest {
    private static final VolumeId A = new VolumeId("np-a");
    private static final VolumeId B = new VolumeId("np-b");
    private static final int BS = 4096;
    private static final long HOUR = 3_600_000L;

    @TempDir
    Path dir;

    private final GcServiceTest.SimClock clock = new GcServiceTest.SimClock(Instant.parse("2026-06-01T00:00:00Z").toEpochMilli());
    private GcStoreFixture fixture;
    private GcService gc;
    private long seed;

    @BeforeEach
    void open() {
        fixture = GcStoreFixture.open(dir, clock, 1L << 20, Duration.ofHours(2), 8, h -> h);
        gc = fixture.gc;
    }

    @AfterEach
    void close() {
        if (fixture != null) {
            fixture.close();
        }
    }

    private void crashAndReopen() {
        fixture.abandon();
        fixture = null;
        open();
    }

    private void snapshot(VolumeId v) {
        byte[] payload = new byte[BS];
        new Random(++seed).nextBytes(payload);
        try {
            byte[] fp = MessageDigest.getInstance("SHA-256").digest(payload);
            long pbn = fixture.store.append(fp, 0, payload, 0, BS, FormatVersions.CODEC_RAW, BS);
            fixture.store.sync();
            assertThat(gc.guard().protect(pbn)).isTrue();
            SessionMap m = new SessionMap(4);
            m.add(0, pbn);
            long parent = fixture.catalog.volume(v).map(r -> r.latestSequence()).orElse(0L);
            fixture.commit.commit(new SnapshotCommit.Request(v, BS, BS, parent, m, BS, 1, 1, 0));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }

    private void assertClean() {
        FsckReport f = gc.fsck(clock.millis);
        assertThat(f.dataLoss()).as(f.toText()).isFalse();
        assertThat(f.bookkeepingErrors()).as(f.toText()).isFalse();
    }

    @Test
    void update_reachesEveryAssignedVolume_raisingExpiries() {
        snapshot(A);
        snapshot(B);
        long created = fixture.catalog.requireSnapshot(A, 1).createdAtMillis();
        NamedPolicies np = gc.namedPolicies();
        np.create("gold", "1d", "");
        np.assignName(A, "gold");
        np.assignName(B, "gold");
        assertThat(np.get("gold").volumes()).containsExactly("np-a", "np-b");
        np.update("gold", "30d", "longer");
        assertThat(gc.policy(A)).isEqualTo("30d");
        assertThat(gc.policy(B)).isEqualTo("30d");
        assertThat(gc.expiry(A, 1)).contains(created + 30 * 24 * HOUR);
        assertThat(np.assignment(B).name()).isEqualTo("gold");
        assertClean();
    }

    @Test
    void update_shorterUnderComplianceLockOfOneVolume_refusedNothingChanged() {
        snapshot(A);
        snapshot(B);
        NamedPolicies np = gc.namedPolicies();
        np.create("gold", "30d", "");
        np.assignName(A, "gold");
        np.assignName(B, "gold");
        gc.locks().place(B, 1, RetentionLocks.Mode.COMPLIANCE, clock.millis + 90 * 24 * HOUR, "test");
        long expiryA = gc.expiry(A, 1).orElseThrow();
        assertThatThrownBy(() -> np.update("gold", "1d", "")).isInstanceOf(SnapshotLockedException.class);
        assertThat(np.get("gold").policy()).isEqualTo("30d");
        assertThat(gc.policy(A)).isEqualTo("30d"); // A has no lock, but the change is all or nothing
        assertThat(gc.policy(B)).isEqualTo("30d");
        assertThat(gc.expiry(A, 1)).contains(expiryA);
        np.update("gold", "60d", "");
        assertThat(gc.policy(B)).isEqualTo("60d");
    }

    @Test
    void crashBetweenNameAndVolumes_openFinishesTheUpdate() {
        snapshot(A);
        long created = fixture.catalog.requireSnapshot(A, 1).createdAtMillis();
        NamedPolicies np = gc.namedPolicies();
        np.create("gold", "1d", "");
        np.assignName(A, "gold");
        // the first step of an update (the name's new text) is durable, the volumes' step is not
        PolicyStore store = new PolicyStore(fixture.db);
        PolicyStore.Entry e = store.policy("gold").orElseThrow();
        try (MetadataBatch b = new MetadataBatch()) {
            store.putPolicy(b, new PolicyStore.Entry("gold", "30d", "", e.createdMillis(), clock.millis));
            store.write(b);
        }
        crashAndReopen();
        assertThat(gc.policy(A)).isEqualTo("1d");
        gc.namedPolicies().reconcile(); // as the server does at start
        assertThat(gc.policy(A)).isEqualTo("30d");
        assertThat(gc.expiry(A, 1)).contains(created + 30 * 24 * HOUR);
        clock.millis += 2 * 24 * HOUR; // past the old 1d expiry: the snapshot must survive a cycle
        snapshot(A);
        gc.runCycle(clock.millis);
        assertThat(fixture.catalog.snapshots(A)).hasSize(2);
        assertClean();
    }

    @Test
    void deletedVolume_assignmentIgnored_nameDeletable_sameNameStartsOnDefault() {
        snapshot(A);
        snapshot(A);
        NamedPolicies np = gc.namedPolicies();
        np.create("gold", "7d", "");
        np.assignName(A, "gold");
        assertThatThrownBy(() -> np.delete("gold")).isInstanceOf(GcConflictException.class).hasMessageContaining("np-a");
        gc.deleteVolume(A, VolumeGate.NONE);
        assertThat(np.get("gold").volumes()).isEmpty();
        assertThat(new PolicyStore(fixture.db).assignments()).as("the deletion's batch removes the assignment").isEmpty();
        snapshot(A); // a new volume under the old name
        assertThat(np.assignment(A).name()).isEqualTo(NamedPolicies.DEFAULT_NAME);
        assertThat(np.assignment(A).policy()).isEqualTo("12h");
        np.delete("gold");
        assertThat(new PolicyStore(fixture.db).assignments()).isEmpty();
        assertThatThrownBy(() -> np.get("gold")).isInstanceOf(UnknownPolicyException.class);
        assertClean();
    }

    @Test
    void builtInDefault_listedFirst_notChangeableOrDeletable_assignableAsText() {
        snapshot(A);
        NamedPolicies np = gc.namedPolicies();
        assertThat(np.list().get(0).name()).isEqualTo("default");
        assertThat(np.list().get(0).policy()).isEqualTo("12h");
        assertThat(np.list().get(0).volumes()).containsExactly("np-a");
        assertThatThrownBy(() -> np.update("default", "1d", "")).isInstanceOf(GcConflictException.class);
        assertThatThrownBy(() -> np.delete("default")).isInstanceOf(GcConflictException.class);
        assertThatThrownBy(() -> np.create("default", "1d", "")).isInstanceOf(GcConflictException.class);
        np.assignText(A, "3d");
        assertThat(np.assignment(A).name()).isNull();
        assertThat(np.list().get(0).volumes()).isEmpty();
        np.assignName(A, "default");
        assertThat(np.assignment(A)).isEqualTo(new NamedPolicies.Assignment("np-a", "12h", "default"));
    }
}
