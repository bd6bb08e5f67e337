package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.holdfast.server.cluster.LoadProbe;
import org.holdfast.server.cluster.MemberState;
import org.holdfast.server.cluster.MembershipSettings;
import org.holdfast.common.id.PbnRange;
import org.holdfast.server.cluster.WorkerRecord;
import org.holdfast.server.security.ApiTokens;
import org.holdfast.server.security.AuditEvent;
import org.holdfast.server.security.Role;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A worker token stolen from one host against the binding of nodes to tokens: real workers
 * ({@link WorkerConnector}) against a real cluster port, real tokens and the real catalog on disk.
 * Every refusal leaves the stored record (epoch, range, binding) as it was, and is audited.
 */
class WorkerTokenBindingTest {
    @TempDir
    Path dir;
    private TestMaster master;
    private final List<AuditEvent> audit = new java.util.concurrent.CopyOnWriteArrayList<>();
    private int maxNodesPerToken = MembershipSettings.DEFAULT_MAX_NODES_PER_TOKEN;

    @BeforeEach
    void start() {
        open();
    }

    /** A master start on the catalog in {@code dir}. */
    private void open() {
        master = new TestMaster(dir.resolve("catalog"), new MembershipSettings(Duration.ofMillis(100), Duration.ofMillis(400),
                Duration.ofSeconds(2), MembershipSettings.DEFAULT_FIRST_PBN, MembershipSettings.DEFAULT_RANGE_SIZE, maxNodesPerToken),
                audit::add);
    }

    @AfterEach
    void stop() {
        master.close();
    }

    /** A new worker token, written to a file of its own; the file's name is the token's id. */
    private Path issue(String name) throws Exception {
        String token = master.tokens.issue(new ApiTokens.TokenRequest(name, Role.WORKER, null, null, null), "test", "test").token();
        return Files.writeString(dir.resolve(ApiTokens.idOf(token).orElseThrow()), token);
    }

    private static String idOf(Path tokenFile) {
        return tokenFile.getFileName().toString();
    }

    private WorkerConnector worker(String node, Path tokenFile) {
        WorkerConnector w = new WorkerConnector(master.linkSettings(node, tokenFile), new LoadProbe(dir));
        w.start();
        return w;
    }

    /** Runs worker {@code node} with {@code tokenFile} until registered, then stops it: the node is lost. */
    private WorkerRecord registerAndStop(String node, Path tokenFile) {
        WorkerRecord got;
        try (WorkerConnector w = worker(node, tokenFile)) {
            await().atMost(Duration.ofSeconds(10)).until(() -> w.status().connected());
            got = w.status().assignment();
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> master.registry.state(got.workerId()) == MemberState.LOST);
        return got;
    }

    /** Runs worker {@code node} with {@code tokenFile} until the master refuses it, and returns the refusal. */
    private String refusal(String node, Path tokenFile) {
        try (WorkerConnector w = worker(node, tokenFile)) {
            await().atMost(Duration.ofSeconds(10)).until(() -> w.status().lastError() != null);
            assertThat(w.status().connected()).isFalse();
            return w.status().lastError();
        }
    }

    private List<AuditEvent> denied(Path tokenFile) {
        return audit.stream().filter(e -> e.result().equals("denied") && e.principal().contains(idOf(tokenFile))).toList();
    }

    @Test
    void register_lostNodeWithAnotherWorkerToken_isRefusedAuditedAndRecordEpochAndRangeStay() throws Exception {
        Path owner = issue("host-a");
        Path stolen = issue("host-b");
        registerAndStop("w1", owner);
        List<WorkerRecord> before = master.store.workers();
        assertThat(before).singleElement().extracting(WorkerRecord::tokenId).isEqualTo(idOf(owner));

        assertThat(refusal("w1", stolen)).contains("NODE_CONFLICT").contains("node w1 is bound to another worker token")
                .contains("DELETE /api/v1/cluster/workers/1");
        assertThat(master.store.workers()).as("record, epoch, range and binding unchanged").isEqualTo(before);
        assertThat(master.registry.workers()).singleElement().satisfies(v -> {
            assertThat(v.state()).isEqualTo(MemberState.LOST);
            assertThat(v.epoch()).isEqualTo(1);
        });
        await().atMost(Duration.ofSeconds(5)).until(() -> !denied(stolen).isEmpty());
        assertThat(denied(stolen).get(0)).satisfies(e -> {
            assertThat(e.action()).isEqualTo("cluster.register");
            assertThat(e.target()).isEqualTo("node:w1");
            assertThat(e.detail()).contains("bound to another worker token");
        });

        WorkerRecord again = registerAndStop("w1", owner);
        assertThat(again.epoch()).as("the owner's token is still welcome").isEqualTo(2);
        assertThat(again.range()).isEqualTo(before.get(0).range());
    }

    @Test
    void masterRestart_keepsTheBindingOnDisk() throws Exception {
        Path owner = issue("host-a");
        Path stolen = issue("host-b");
        WorkerRecord first = registerAndStop("w1", owner);
        master.close();
        open();
        assertThat(refusal("w1", stolen)).contains("bound to another worker token");
        assertThat(master.store.workers()).singleElement().satisfies(r -> {
            assertThat(r.epoch()).isEqualTo(1);
            assertThat(r.tokenId()).isEqualTo(idOf(owner));
        });
        WorkerRecord again = registerAndStop("w1", owner);
        assertThat(again.workerId()).isEqualTo(first.workerId());
        assertThat(again.epoch()).isEqualTo(2);
    }

    @Test
    void revokedToken_dropsItsWorkerAndANewTokenTakesTheNodeOnlyAfterTheWorkerIsRemoved() throws Exception {
        Path old = issue("host-a");
        Path rotated = issue("host-a-2");
        try (WorkerConnector w = worker("w1", old)) {
            await().atMost(Duration.ofSeconds(10)).until(() -> w.status().connected());
            master.tokens.revoke(idOf(old), "test", "test");
            await().atMost(Duration.ofSeconds(10)).until(() -> !w.status().connected() && w.status().lastError() != null);
            assertThat(w.status().lastError()).contains("revoked");
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> master.registry.state(1) == MemberState.LOST);
        assertThat(refusal("w1", rotated)).as("a new token does not take a bound node over").contains("bound to another worker token");

        PbnRange oldRange = master.store.workers().get(0).range();
        master.registry.remove(1); // what DELETE /api/v1/cluster/workers/1 does
        WorkerRecord taken = registerAndStop("w1", rotated);
        assertThat(taken.workerId()).as("a new worker").isEqualTo(2);
        // not its epoch: a REGISTER the refused worker sent as it closed may reach the master after the removal (epoch 1, then ours 2)
        assertThat(taken.range()).as("a new range").isNotEqualTo(oldRange);
        assertThat(master.store.workers()).singleElement().extracting(WorkerRecord::tokenId).isEqualTo(idOf(rotated));
    }

    @Test
    void register_tokenOverItsNodeLimit_isRefusedLimitExceededAndAudited() throws Exception {
        master.close();
        maxNodesPerToken = 2;
        open();
        Path token = issue("shared");
        registerAndStop("w1", token);
        registerAndStop("w2", token);
        assertThat(refusal("w3", token)).contains("LIMIT_EXCEEDED").contains("holdfast.cluster.max-nodes-per-token");
        assertThat(master.store.workers()).extracting(WorkerRecord::nodeName).containsExactlyInAnyOrder("w1", "w2");
        await().atMost(Duration.ofSeconds(5)).until(() -> !denied(token).isEmpty());
        assertThat(denied(token).get(0).target()).isEqualTo("node:w3");
    }

    @Test
    void rotation_rebindWhileConnectedThenRevokeTheOldToken_workerComesBackOnTheNewTokenWithItsIdAndRange() throws Exception {
        Path tokenFile = issue("host-a");
        String oldId = idOf(tokenFile);
        Path next = issue("host-a-2");
        try (WorkerConnector w = worker("w1", tokenFile)) {
            await().atMost(Duration.ofSeconds(10)).until(() -> w.status().connected());
            WorkerRecord first = w.status().assignment();
            // the operator's steps: the new token into the worker's file, rebind (PUT .../workers/1/token), revoke the old one
            Files.writeString(tokenFile, Files.readString(next));
            master.registry.rebind(first.workerId(), idOf(next)); // ends the connection on the old token at its next heartbeat
            master.tokens.revoke(oldId, "test", "test");
            await().atMost(Duration.ofSeconds(10)).until(() -> w.status().connected() && w.status().assignment().epoch() == 2);
            assertThat(w.status().assignment().workerId()).isEqualTo(first.workerId());
            assertThat(w.status().assignment().range()).isEqualTo(first.range());
        }
        assertThat(master.store.workers()).singleElement().extracting(WorkerRecord::tokenId).isEqualTo(idOf(next));
    }

    @Test
    void rebindWhileConnected_endsTheOldTokensConnectionAtItsNextHeartbeatWithoutARevocation() throws Exception {
        // a thief registered w1 with a stolen token that other workers share, so revoking it is no option: the rebind alone must end it
        Path stolen = issue("shared");
        Path owner = issue("host-a-2");
        try (WorkerConnector thief = worker("w1", stolen)) {
            await().atMost(Duration.ofSeconds(10)).until(() -> thief.status().connected());
            long id = thief.status().assignment().workerId();
            master.registry.rebind(id, idOf(owner));
            await().atMost(Duration.ofSeconds(10)).until(() -> thief.status().lastError() != null);
            assertThat(thief.status().lastError()).contains("NODE_CONFLICT").contains("bound to another worker token");
            assertThat(thief.status().connected()).isFalse();
            await().atMost(Duration.ofSeconds(5)).until(() -> master.registry.state(id) == MemberState.LOST);
            assertThat(master.store.workers()).singleElement().satisfies(r -> {
                assertThat(r.tokenId()).isEqualTo(idOf(owner));
                assertThat(r.epoch()).as("the thief got no registration back").isEqualTo(1);
            });
        }
        await().atMost(Duration.ofSeconds(5)).until(() -> denied(stolen).stream().anyMatch(e -> e.action().equals("cluster.heartbeat")));
        assertThat(registerAndStop("w1", owner).epoch()).isEqualTo(2);
    }

    @Test
    void rebind_thenTheOldTokenIsRefusedForTheNode() throws Exception {
        Path old = issue("host-a");
        Path next = issue("host-a-2");
        WorkerRecord first = registerAndStop("w1", old);
        master.registry.rebind(first.workerId(), idOf(next));
        assertThat(refusal("w1", old)).contains("bound to another worker token");
        assertThat(registerAndStop("w1", next).epoch()).isEqualTo(2);
    }
}
