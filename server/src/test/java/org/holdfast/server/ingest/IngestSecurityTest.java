package org.holdfast.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.protocol.BackupBegin;
import org.holdfast.common.protocol.BackupReady;
import org.holdfast.common.protocol.Blocks;
import org.holdfast.common.protocol.Commit;
import org.holdfast.common.protocol.Committed;
import org.holdfast.common.protocol.Entries;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.common.protocol.Hello;
import org.holdfast.common.protocol.HelloOk;
import org.holdfast.common.protocol.ListSnapshots;
import org.holdfast.common.protocol.Need;
import org.holdfast.common.protocol.PayloadCodec;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.common.protocol.Restore;
import org.holdfast.common.protocol.SnapshotList;
import org.holdfast.server.catalog.MapCursor;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.engine.DedupDomain;
import org.holdfast.server.engine.DedupStream;
import org.holdfast.server.gc.StoreReclaimer;
import org.holdfast.server.security.AccessPrincipal;
import org.holdfast.server.security.AuditEvent;
import org.holdfast.server.security.Role;
import org.holdfast.server.security.VolumeScope;
import org.holdfast.server.store.PossessionTestAccess;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue #10 over real sockets against a real store: the fingerprint-as-key attack, proof of
 * possession, dedup domains, and token and scope refusals on the ingest port.
 */
class IngestSecurityTest {
    private static final int BS = 4096;
    /** Distinct non-zero blocks of a 64-block BackupRestoreLoopbackTest image (3 zero blocks, one block three times). */
    private static final int UNIQUE = 59;
    private static final String VICTIM = "victim-secret-token-aaaaaaaa";
    private static final String ATTACKER = "attacker-secret-token-bbbbbbbb";
    private static final String TWIN = "twin-secret-token-cccccccc";
    private static final String TENANT_A = "tenant-a-secret-token-dddddddd";
    private static final String TENANT_B = "tenant-b-secret-token-eeeeeeee";
    private static final String ALPHA_ONLY = "alpha-only-secret-token-ffffffff";
    private static final String VIEWER = "viewer-secret-token-gggggggg";

    @TempDir
    Path dir;
    private IngestHarness harness;

    @BeforeEach
    void start() {
        harness = new IngestHarness(dir);
        harness.tokens()
                .add(VICTIM, agent("victim", "victim", null))
                .add(ATTACKER, agent("attacker", "attacker", null))
                .add(TWIN, agent("twin", "twin", null))
                .add(TENANT_A, agent("tenant-a", "a-*", "tenant-a"))
                .add(TENANT_B, agent("tenant-b", "b-*", "tenant-b"))
                .add(ALPHA_ONLY, agent("alpha-only", "alpha", null))
                .add(VIEWER, new AccessPrincipal("token:7(viewer)", Role.VIEWER, VolumeScope.ALL, null));
    }

    @AfterEach
    void stop() {
        harness.close();
    }

    private static AccessPrincipal agent(String name, String scope, String domain) {
        return new AccessPrincipal("token:" + name, Role.AGENT, new VolumeScope(List.of(scope)), domain);
    }

    // ---- proof of possession ------------------------------------------------------------------

    @Test
    void entries_victimFingerprintsWithoutProof_attackerGetsNoVictimBlock() {
        byte[] victimImg = BackupRestoreLoopbackTest.image(1, 64 * BS);
        byte[] attackerImg = BackupRestoreLoopbackTest.image(2, 16 * BS);
        backup(VICTIM, "victim", victimImg);
        backup(ATTACKER, "attacker", attackerImg);
        Set<Long> victimPbns = pbns("victim", 1);
        byte[] victimFps = BackupRestoreLoopbackTest.fps(victimImg, 0, 64);
        int nonZero = 0;
        for (int i = 0; i < 64; i++) {
            nonZero += AgentDriver.isZero(victimFps, i * 32) ? 0 : 1;
        }

        // Attack 1: wrong tags, then COMMIT without uploading.
        try (AgentDriver a = harness.agent(ATTACKER)) {
            a.hello();
            a.begin("attacker", BS, victimImg.length, 1);
            long[] wrong = new long[64];
            for (int i = 0; i < 64; i++) {
                wrong[i] = 0x1234_5678L * (i + 1);
            }
            a.send(new Entries(0, 64, victimFps, wrong));
            Need need = a.expect(Need.class);
            assertThat(need.neededCount()).as("every victim block is asked for").isEqualTo(nonZero - 2); // one block appears three times
            a.send(new Commit(victimImg.length));
            assertThat(a.expectErrorAndStop().code()).isEqualTo(ErrorCode.BAD_STATE);
        }
        // Attack 2: no tags, then garbage for what was asked.
        try (AgentDriver a = harness.agent(ATTACKER)) {
            a.hello();
            a.begin("attacker", BS, victimImg.length, 1);
            a.send(new Entries(0, 64, victimFps, new long[64]));
            Need need = a.expect(Need.class);
            assertThat(need.neededCount()).isEqualTo(nonZero - 2);
            Blocks.Builder b = Blocks.builder(a.alloc(), 1 << 20);
            byte[] garbage = new byte[BS];
            garbage[0] = 1;
            for (int i = 0; i < 64; i++) {
                if (need.isNeeded(i)) {
                    b.add(i, PayloadCodec.RAW, garbage, 0, BS);
                }
            }
            a.send(b.build());
            assertThat(a.expectErrorAndStop().code()).isEqualTo(ErrorCode.FINGERPRINT_MISMATCH);
        }

        assertThat(harness.catalog().requireVolume(new VolumeId("attacker")).latestSequence()).isEqualTo(1);
        Set<Long> attackerPbns = pbns("attacker", 1);
        attackerPbns.retainAll(victimPbns);
        assertThat(attackerPbns).as("victim PBNs the attacker's volume refers to").isEmpty();
        try (AgentDriver a = harness.agent(ATTACKER)) {
            a.hello();
            assertThat(a.restore("attacker", 1).image()).isEqualTo(attackerImg);
        }
        try (AgentDriver v = harness.agent(VICTIM)) {
            v.hello();
            assertThat(v.restore("victim", 1).image()).isEqualTo(victimImg);
        }
        assertThat(harness.server().stats().unprovenMatches()).isZero(); // no attack session committed
    }

    @Test
    void entries_agentHoldingTheContent_dedupsWithoutUpload() {
        byte[] img = BackupRestoreLoopbackTest.image(3, 64 * BS);
        backup(VICTIM, "victim", img);
        try (AgentDriver a = harness.agent(TWIN)) {
            a.hello();
            a.begin("twin", BS, img.length, 0);
            assertThat(a.sendEntriesAndBlocks(img, BS, 0, 64, false, null)).as("payloads asked for").isZero();
            a.send(new Commit(img.length));
            Committed c = a.expect(Committed.class);
            assertThat(c.newBlocks()).isZero();
            assertThat(a.restore("twin", 1).image()).isEqualTo(img);
        }
        assertThat(victimOf(pbns("twin", 1))).isTrue();
    }

    private boolean victimOf(Set<Long> pbns) {
        return pbns("victim", 1).containsAll(pbns);
    }

    @Test
    void entries_blocksStoredBeforeProofs_askedOnceThenReferencedWithoutSecondCopy() {
        byte[] img = BackupRestoreLoopbackTest.image(4, 64 * BS);
        backup(VICTIM, "victim", img);
        long storedBefore = harness.store().nextPbn();
        PossessionTestAccess.forgetAllPfs(harness.store()); // as if written by a server before this change
        try (AgentDriver a = harness.agent(TWIN)) {
            a.hello();
            a.begin("twin", BS, img.length, 0);
            assertThat(a.sendEntriesAndBlocks(img, BS, 0, 64, true, null)).as("legacy blocks are asked for").isEqualTo(UNIQUE);
            a.send(new Commit(img.length));
            assertThat(a.expect(Committed.class).newBlocks()).as("proven, so referenced, not stored again").isZero();
        }
        assertThat(harness.store().nextPbn()).isEqualTo(storedBefore);
        assertThat(victimOf(pbns("twin", 1))).isTrue();
        // the upload recorded the pfs: the next holder proves with tags alone
        harness.tokens().add("third-secret-token-hhhhhhhh", agent("third", "third", null));
        try (AgentDriver a = harness.agent("third-secret-token-hhhhhhhh")) {
            a.hello();
            a.begin("third", BS, img.length, 0);
            assertThat(a.sendEntriesAndBlocks(img, BS, 0, 64, false, null)).isZero();
            a.send(new Commit(img.length));
            a.expect(Committed.class);
            assertThat(a.restore("third", 1).image()).isEqualTo(img);
        }
    }

    // ---- dedup domains ------------------------------------------------------------------------

    @Test
    void backup_sameContentInTwoDomains_storedTwiceAndAskedForInFull() {
        byte[] img = BackupRestoreLoopbackTest.image(5, 64 * BS);
        assertThat(askedFor(TENANT_A, "a-1", img)).isEqualTo(UNIQUE);
        assertThat(askedFor(TENANT_B, "b-1", img)).as("nothing is known across domains").isEqualTo(UNIQUE);
        assertThat(askedFor(TENANT_A, "a-2", img)).as("dedup within a domain").isZero();
        assertThat(askedFor(VICTIM, "victim", img)).as("the default domain is a domain too").isEqualTo(UNIQUE);
        assertThat(harness.catalog().requireVolume(new VolumeId("a-1")).domain()).isEqualTo("tenant-a");
        assertThat(harness.catalog().requireVolume(new VolumeId("b-1")).domain()).isEqualTo("tenant-b");
        assertThat(harness.catalog().requireVolume(new VolumeId("victim")).domain()).isEqualTo(VolumeRecord.DEFAULT_DOMAIN);
        Set<Long> a = pbns("a-1", 1);
        Set<Long> b = pbns("b-1", 1);
        assertThat(pbns("a-2", 1)).isEqualTo(a);
        b.retainAll(a);
        assertThat(b).isEmpty();
        try (AgentDriver d = harness.agent(TENANT_B)) {
            d.hello();
            assertThat(d.restore("b-1", 1).image()).isEqualTo(img);
        }
        // a domain is fixed at creation: a restart reads it back
        harness.restart();
        assertThat(harness.catalog().requireVolume(new VolumeId("b-1")).domain()).isEqualTo("tenant-b");
        assertThat(askedFor(TENANT_B, "b-2", img)).isZero();
    }

    @Test
    void reclaim_blockOfAnotherDomain_indexForgetsItsDomainKey() {
        byte[] img = BackupRestoreLoopbackTest.image(6, 32 * BS);
        askedFor(TENANT_A, "a-1", img);
        byte[] fp = BackupRestoreLoopbackTest.fps(img, 20, 1);
        byte[] key = new byte[32];
        new DedupDomain("tenant-a").keys(fp, 0, key, 0, 1);
        long[] found = new long[1];
        try (DedupStream s = harness.index().openStream("probe")) {
            s.lookup(fp, 1, found);
            assertThat(found[0]).as("the raw fingerprint is no key outside the default domain").isZero();
            s.lookup(key, 1, found);
        }
        long pbn = found[0];
        assertThat(pbn).isPositive();
        new StoreReclaimer(harness.store(), harness.index(), harness.db()).reclaim(new long[] {pbn}, 1);
        try (DedupStream s = harness.index().openStream("probe")) {
            s.lookup(key, 1, found);
        }
        assertThat(found[0]).as("a freed block is never offered again").isZero();
    }

    // ---- tokens and scopes --------------------------------------------------------------------

    @Test
    void hello_missingBadOrRevokedToken_refusedAndNothingChanges() {
        byte[] alpha = BackupRestoreLoopbackTest.image(7, 32 * BS);
        backup(TestTokens.DEFAULT_AGENT, "alpha", alpha);
        String catalogBefore = catalogState();

        ErrorMessage none = refusedHello("");
        assertThat(none.message()).contains("no API token");
        ErrorMessage bad = refusedHello("not-a-real-token-zzzzzzzz");
        assertThat(bad.message()).contains("unknown token").doesNotContain("not-a-real-token-zzzzzzzz");

        try (AgentDriver a = harness.agent(ALPHA_ONLY)) {
            a.hello();
            assertThat(a.list("alpha").snapshots()).hasSize(1);
        }
        harness.tokens().revoke(ALPHA_ONLY);
        assertThat(refusedHello(ALPHA_ONLY).message()).contains("revoked");

        assertThat(catalogState()).isEqualTo(catalogBefore);
        assertRestores("alpha", alpha);
        List<AuditEvent> denied = harness.audit().events().stream().filter(e -> e.result().equals("denied")).toList();
        assertThat(denied).hasSize(3).allSatisfy(e -> assertThat(e.action()).isEqualTo("ingest.connect"));
        assertNoSecretAudited();
    }

    @Test
    void requests_tokenRevokedAfterHello_refusedOnTheOpenConnection() {
        byte[] alpha = BackupRestoreLoopbackTest.image(11, 32 * BS);
        backup(TestTokens.DEFAULT_AGENT, "alpha", alpha);
        String catalogBefore = catalogState();
        try (AgentDriver restorer = harness.agent(ALPHA_ONLY); AgentDriver backer = harness.agent(ALPHA_ONLY)) {
            restorer.hello();
            backer.hello();
            assertThat(restorer.list("alpha").snapshots()).hasSize(1);
            harness.tokens().revoke(ALPHA_ONLY);

            restorer.send(new Restore("alpha", 1, 0));
            ErrorMessage r = restorer.expectErrorAndClose();
            assertThat(r.code()).isEqualTo(ErrorCode.UNAUTHORIZED);
            assertThat(r.message()).contains("token refused").contains("revoked");
            backer.send(new BackupBegin("alpha", BS, alpha.length, 1));
            ErrorMessage b = backer.expectErrorAndClose();
            assertThat(b.code()).isEqualTo(ErrorCode.UNAUTHORIZED);
            assertThat(b.message()).contains("revoked");
        }
        assertThat(catalogState()).isEqualTo(catalogBefore);
        assertThat(harness.server().volumeLocks().tryLock("alpha", 1)).as("no session was begun").isTrue();
        harness.server().volumeLocks().unlock("alpha", 1);
        assertRestores("alpha", alpha);
        assertThat(harness.audit().events().stream().filter(e -> e.result().equals("denied")).map(AuditEvent::action).toList())
                .containsExactlyInAnyOrder("snapshot.restore", "backup.begin");
        assertNoSecretAudited();
    }

    @Test
    void hello_badTokenPipelinedWithBackupBegin_laterFrameNeverHandled() {
        try (AgentDriver a = harness.agent()) {
            a.sendPipelined(Hello.of("pipelining", "not-a-real-token-zzzzzzzz"), new BackupBegin("gamma", BS, 8 * BS, 0));
            ErrorMessage e = a.expectErrorAndClose();
            assertThat(e.code()).isEqualTo(ErrorCode.UNAUTHORIZED);
        }
        assertThat(harness.catalog().volumes()).isEmpty();
        assertThat(harness.server().volumeLocks().tryLock("gamma", 1)).as("no session was begun").isTrue();
    }

    @Test
    void hello_goodTokenPipelinedWithList_framesAfterHelloHandledOnceAccepted() {
        backup(TestTokens.DEFAULT_AGENT, "alpha", BackupRestoreLoopbackTest.image(8, 8 * BS));
        try (AgentDriver a = harness.agent()) {
            a.sendPipelined(Hello.of("pipelining", TestTokens.DEFAULT_AGENT), new ListSnapshots("alpha"));
            a.expect(HelloOk.class);
            assertThat(a.expect(SnapshotList.class).snapshots()).hasSize(1);
        }
    }

    @Test
    void requests_outOfScopeOrWrongRole_unauthorizedAndNothingChanges() {
        byte[] alpha = BackupRestoreLoopbackTest.image(9, 32 * BS);
        byte[] beta = BackupRestoreLoopbackTest.image(10, 32 * BS);
        backup(TestTokens.DEFAULT_AGENT, "alpha", alpha);
        backup(TestTokens.DEFAULT_AGENT, "beta", beta);
        String catalogBefore = catalogState();

        ErrorMessage backupBeta = refused(ALPHA_ONLY, new BackupBegin("beta", BS, beta.length, 1));
        ErrorMessage restoreBeta = refused(ALPHA_ONLY, new Restore("beta", 1, 0));
        ErrorMessage listBeta = refused(ALPHA_ONLY, new ListSnapshots("beta"));
        ErrorMessage listMissing = refused(ALPHA_ONLY, new ListSnapshots("missing"));
        assertThat(backupBeta.message()).contains("outside the token's volume scope");
        assertThat(restoreBeta.message()).contains("outside the token's volume scope");
        assertThat(listMissing.message().replace("missing", "beta"))
                .as("an existing volume and an unknown one are refused alike").isEqualTo(listBeta.message());
        ErrorMessage newVolume = refused(ALPHA_ONLY, new BackupBegin("gamma", BS, 8 * BS, 0));
        assertThat(newVolume.message()).contains("outside the token's volume scope");

        try (AgentDriver v = harness.agent(VIEWER)) {
            v.hello();
            assertThat(v.list("alpha").snapshots()).as("a viewer may list").hasSize(1);
        }
        assertThat(refused(VIEWER, new BackupBegin("alpha", BS, alpha.length, 1)).message()).contains("role viewer may not back up");
        assertThat(refused(VIEWER, new Restore("alpha", 1, 0)).message()).contains("role viewer may not restore");

        assertThat(catalogState()).isEqualTo(catalogBefore);
        assertRestores("alpha", alpha);
        assertRestores("beta", beta);
        assertThat(harness.audit().events().stream().filter(e -> e.result().equals("denied")).count()).isEqualTo(7);
        assertThat(harness.audit().events()).anySatisfy(e -> {
            assertThat(e.action()).isEqualTo("snapshot.commit");
            assertThat(e.target()).isEqualTo("volume:alpha@1");
            assertThat(e.principal()).isEqualTo("token:1(test agent)");
        });
        assertNoSecretAudited();
    }

    @Test
    void requests_workerToken_refusedForEveryActionAndRegisterIsNotAnAgentMessage() {
        byte[] alpha = BackupRestoreLoopbackTest.image(11, 8 * BS);
        backup(TestTokens.DEFAULT_AGENT, "alpha", alpha);
        String catalogBefore = catalogState();
        String worker = "worker-secret-token-hhhhhhhh";
        harness.tokens().add(worker, new AccessPrincipal("token:9(worker)", Role.WORKER, VolumeScope.ALL, null));

        assertThat(refused(worker, new ListSnapshots("alpha")).message()).contains("role worker may not list");
        assertThat(refused(worker, new Restore("alpha", 1, 0)).message()).contains("role worker may not restore");
        assertThat(refused(worker, new BackupBegin("alpha", BS, alpha.length, 1)).message()).contains("role worker may not back up");
        try (AgentDriver a = harness.agent()) {
            a.send(new org.holdfast.common.protocol.Register(org.holdfast.common.protocol.Register.CLUSTER_VERSION, "w1",
                    TestTokens.DEFAULT_AGENT, "test", 1, 1, 1));
            ErrorMessage e = a.expectErrorAndClose();
            assertThat(e.code()).isEqualTo(ErrorCode.BAD_STATE);
            assertThat(e.message()).contains("first message must be HELLO, got REGISTER");
        }
        assertThat(catalogState()).isEqualTo(catalogBefore);
        assertRestores("alpha", alpha);
    }

    // ---- helpers ------------------------------------------------------------------------------

    private void backup(String token, String volume, byte[] img) {
        try (AgentDriver a = harness.agent(token)) {
            a.hello();
            a.backup(volume, img, BS, true);
        }
    }

    private int askedFor(String token, String volume, byte[] img) {
        try (AgentDriver a = harness.agent(token)) {
            a.hello();
            a.begin(volume, BS, img.length, 0);
            int asked = a.sendEntriesAndBlocks(img, BS, 0, ProtocolLimits.blockCount(img.length, BS), true, null);
            a.send(new Commit(img.length));
            a.expect(Committed.class);
            return asked;
        }
    }

    private ErrorMessage refusedHello(String token) {
        try (AgentDriver a = harness.agent(token)) {
            a.send(Hello.of("test", token));
            ErrorMessage e = a.expectErrorAndClose();
            assertThat(e.code()).isEqualTo(ErrorCode.UNAUTHORIZED);
            return e;
        }
    }

    private ErrorMessage refused(String token, org.holdfast.common.protocol.Message request) {
        try (AgentDriver a = harness.agent(token)) {
            a.hello();
            a.send(request);
            ErrorMessage e = a.expectErrorAndClose();
            assertThat(e.code()).as("answer to %s", request).isEqualTo(ErrorCode.UNAUTHORIZED);
            return e;
        }
    }

    private void assertRestores(String volume, byte[] expected) {
        try (AgentDriver a = harness.agent()) {
            a.hello();
            long seq = harness.catalog().requireVolume(new VolumeId(volume)).latestSequence();
            assertThat(a.restore(volume, seq).image()).isEqualTo(expected);
        }
    }

    /** Every volume with its snapshots, as text. */
    private String catalogState() {
        StringBuilder sb = new StringBuilder();
        for (VolumeRecord v : harness.catalog().volumes()) {
            sb.append(v).append(harness.catalog().snapshots(v)).append('\n');
        }
        return sb.toString();
    }

    private Set<Long> pbns(String volume, long sequence) {
        VolumeRecord v = harness.catalog().requireVolume(new VolumeId(volume));
        Set<Long> out = new HashSet<>();
        try (MapCursor c = harness.catalog().mapCursor(v.internalId())) {
            c.startScan(sequence, 0, Long.MAX_VALUE);
            while (c.nextMapped()) {
                if (c.pbn() != 0) {
                    out.add(c.pbn());
                }
            }
        }
        return out;
    }

    private void assertNoSecretAudited() {
        for (AuditEvent e : harness.audit().events()) {
            String all = e.principal() + e.source() + e.action() + e.target() + e.result() + e.detail();
            for (String secret : List.of(VICTIM, ATTACKER, TWIN, ALPHA_ONLY, VIEWER, TestTokens.DEFAULT_AGENT, "not-a-real-token-zzzzzzzz")) {
                assertThat(all).doesNotContain(secret);
            }
        }
    }
}
