package org.holdfast.server.gc;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.function.Function;
import org.holdfast.common.hash.BlockHasher;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.protocol.Commit;
import org.holdfast.common.protocol.Committed;
import org.holdfast.server.catalog.ReferenceGuard;
import org.holdfast.server.ingest.AgentDriver;
import org.holdfast.server.ingest.IngestServer;
import org.holdfast.server.ingest.IngestServices;
import org.holdfast.server.ingest.IngestSettings;
import org.holdfast.server.ingest.RecordingAuditLog;
import org.holdfast.server.ingest.TestTokens;
import org.holdfast.server.security.AccessPrincipal;
import org.holdfast.server.security.Role;
import org.holdfast.server.security.VolumeScope;
import org.holdfast.server.store.PossessionTestAccess;
import org.holdfast.server.store.StoredBlock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A bad block is repaired (and then referenced) by a backup of another volume only if it provably
 * belongs to that backup's dedup domain. A block without a {@code possession} entry is either an
 * older, pre-possession default-domain block (committed, so GC counts a reference to it) or one that
 * a session of any domain stored and has not recorded yet (in flight, or left by a master crash,
 * which leaves the same state): only the first may be repaired by a default-domain backup. Real
 * stack: RocksDB catalog, data logs, exact index, GC service, and the ingest on loopback.
 */
class BadBlockDomainRepairTest {
    private static final int BS = 4096;
    private static final int BLOCKS = 8;
    private static final String TENANT = "tenant-a-secret-token-dddddddd";

    @TempDir
    Path dir;
    private GcStoreFixture fx;
    private IngestServer ingest;

    /**
     * Opens the real stack and its ingest, whose reference guard {@code guards} makes (the GC's, or
     * none as with bookkeeping off: no reference count known), with a tenant-a token for volumes t-*.
     */
    private void start(Function<GcService, ReferenceGuard> guards) {
        Clock clock = Clock.systemUTC();
        fx = GcStoreFixture.open(dir, clock, 1L << 20, Duration.ofHours(2), 4, hook -> hook);
        TestTokens tokens = new TestTokens();
        tokens.add(TENANT, new AccessPrincipal("token:tenant-a", Role.AGENT, new VolumeScope(List.of("t-*")), "tenant-a"));
        ingest = new IngestServer(IngestSettings.loopback(), new IngestServices(fx.store, fx.catalog, fx.commit, fx.index,
                guards.apply(fx.gc), clock, tokens, new RecordingAuditLog()));
        ingest.start();
    }

    @AfterEach
    void close() {
        try (GcStoreFixture stack = fx; IngestServer server = ingest) {
            // closed in reverse order: the ingest, then the stack (either may be null)
        }
    }

    @Test
    void repair_badBlockOfAnotherDomainsSessionInFlight_defaultBackupStoresItsOwnCopyAndTheTenantRepairsIt() {
        start(GcReferenceGuard::new);
        Random r = new Random(1);
        byte[] tenantImg = image(r);
        byte[] victimImg = image(r);
        System.arraycopy(tenantImg, 0, victimImg, 0, BS); // LBN 0 of both holds the same content
        byte[] fp = fingerprint(tenantImg, 0);
        long p;
        try (AgentDriver t = new AgentDriver(ingest.port(), TENANT)) {
            t.hello();
            t.begin("t-1", BS, tenantImg.length, 0);
            assertThat(t.sendEntriesAndBlocks(tenantImg, BS, 0, BLOCKS, true, null)).isEqualTo(BLOCKS);
            p = awaitStored(fp);
            // another session's commit syncs the data store: the tenant's block is durable, its domain not yet recorded
            ReclaimNowTest.backup(ingest, "other", image(r));
            assertThat(recorded(p)).as("possession entry of the tenant's block before its session records it").isFalse();
            fx.store.badBlocks().mark(p, fp, 0, "test", "damaged record (as a compaction copy finds it)");

            ReclaimNowTest.backup(ingest, "victim", victimImg);

            assertThat(pbns("victim")).as("the default-domain backup refers to no block of tenant-a").doesNotContain(p);
            assertThat(fx.store.badBlocks().isBad(p)).as("the tenant's bad block is left to its own domain").isTrue();
            assertThat(ReclaimNowTest.restore(ingest, "victim", 1)).isEqualTo(victimImg);

            t.send(new Commit(tenantImg.length));
            t.expect(Committed.class);
        }
        assertThat(pbns("t-1")).contains(p);
        // the next backup of the tenant's domain repairs it in place
        try (AgentDriver t = new AgentDriver(ingest.port(), TENANT)) {
            t.hello();
            t.backup("t-2", tenantImg, BS, true);
            assertThat(t.restore("t-1", 1).image()).as("t-1 healed").isEqualTo(tenantImg);
        }
        assertThat(fx.store.badBlocks().isBad(p)).isFalse();
        assertThat(pbns("t-2")).contains(p);
    }

    @Test
    void repair_badPrePossessionBlockReferencedBySnapshot_isRepairedInPlaceByAnotherVolume() {
        start(GcReferenceGuard::new);
        byte[] img = image(new Random(2));
        long p = badPrePossessionBlock(img);

        ReclaimNowTest.backup(ingest, "new", img);

        assertThat(fx.store.badBlocks().isBad(p)).as("the referenced old block is repaired").isFalse();
        assertThat(pbns("new")).contains(p);
        assertThat(ReclaimNowTest.restore(ingest, "old", 1)).as("old@1 healed").isEqualTo(img);
    }

    @Test
    void repair_badPrePossessionBlockWithoutReferenceCounts_isNotRepairedButStoredAnew() {
        start(gc -> ReferenceGuard.NONE); // as with GC bookkeeping off
        byte[] img = image(new Random(3));
        long p = badPrePossessionBlock(img);

        ReclaimNowTest.backup(ingest, "new", img);

        assertThat(fx.store.badBlocks().isBad(p)).as("domain unknown: not repaired").isTrue();
        assertThat(pbns("new")).doesNotContain(p);
        assertThat(ReclaimNowTest.restore(ingest, "new", 1)).isEqualTo(img);
    }

    /**
     * Backs {@code img} up as volume old, drops every possession entry (as if stored before proofs
     * existed), marks the PBN of LBN 0 bad and makes the index forget it (as the sampled engine may
     * miss it), so only the bad-block registry can name it to a backup. Returns that PBN.
     */
    private long badPrePossessionBlock(byte[] img) {
        ReclaimNowTest.backup(ingest, "old", img);
        byte[] fp = fingerprint(img, 0);
        long p = awaitStored(fp);
        PossessionTestAccess.forgetAllPfs(fx.store);
        assertThat(recorded(p)).isFalse();
        fx.store.badBlocks().mark(p, fp, 0, "test", "damaged record (as verify finds it)");
        fx.index.forget(p, fp, 0);
        return p;
    }

    private static byte[] image(Random r) {
        byte[] b = new byte[BLOCKS * BS];
        r.nextBytes(b);
        return b;
    }

    private static byte[] fingerprint(byte[] img, int lbn) {
        byte[] fp = new byte[32];
        new BlockHasher().fingerprint(img, lbn * BS, BS, fp, 0);
        return fp;
    }

    /** The PBN holding {@code fp}, once a session's upload stored it (uploads are not acknowledged). */
    private long awaitStored(byte[] fp) {
        StoredBlock b = new StoredBlock();
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (System.nanoTime() < deadline) {
            for (long pbn = 1; pbn < fx.store.nextPbn(); pbn++) {
                if (fx.store.fingerprint(pbn, b) && java.util.Arrays.equals(b.fingerprint(), 0, 32, fp, 0, 32)) {
                    return pbn;
                }
            }
            Thread.onSpinWait();
        }
        throw new AssertionError("no block holds the fingerprint after 20 s");
    }

    private boolean recorded(long pbn) {
        boolean[] found = new boolean[1];
        fx.store.possession().indexKeys(new long[] {pbn}, 1, new byte[32], found);
        return found[0];
    }

    private Set<Long> pbns(String volume) {
        return fx.mappedPbns(fx.catalog.requireVolume(new VolumeId(volume)));
    }
}
