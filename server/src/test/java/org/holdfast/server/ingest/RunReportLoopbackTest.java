package org.holdfast.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.model.Consistency;
import org.holdfast.common.protocol.Commit;
import org.holdfast.common.protocol.Committed;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.Hello;
import org.holdfast.common.protocol.HelloOk;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.common.protocol.RunRecorded;
import org.holdfast.common.protocol.RunReport;
import org.holdfast.server.security.AccessPrincipal;
import org.holdfast.server.security.AuditEvent;
import org.holdfast.server.security.Role;
import org.holdfast.server.security.VolumeScope;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Protocol version 3 on a real ingest port: HELLO negotiates the version (a version 2 agent is still
 * served, its snapshots recorded with consistency unknown), COMMIT's consistency reaches the catalog,
 * and RUN_REPORT is stored only for a version 3 connection and a volume inside the token's scope.
 */
class RunReportLoopbackTest {
    private static final int BS = 4096;
    private static final String SCOPED = "scoped-secret-token-hhhhhhhh";

    @TempDir
    Path dir;
    private IngestHarness harness;
    private final List<RunReport> reported = new CopyOnWriteArrayList<>();

    @BeforeEach
    void start() {
        harness = new IngestHarness(dir);
        harness.tokens().add(SCOPED, new AccessPrincipal("token:scoped", Role.AGENT, new VolumeScope(List.of("mine")), null));
        harness.observer(new IngestObserver() {
            @Override
            public void runReported(AccessPrincipal principal, String agentName, RunReport report) {
                reported.add(report);
            }
        });
    }

    @AfterEach
    void stop() {
        harness.close();
    }

    private static RunReport report(String volume) {
        return new RunReport(volume, "schedule", 1_000, 2_000, RunReport.Result.FAILED, 5, 0, 0, 0, 0, Consistency.UNKNOWN,
                "pre hook failed (exit 7: cannot freeze); backup skipped");
    }

    private Consistency consistencyOf(String volume) {
        return harness.catalog().snapshots(new VolumeId(volume)).get(0).consistency();
    }

    @Test
    void hello_version2Agent_servedAtVersion2AndSnapshotConsistencyUnknown() {
        try (AgentDriver a = harness.agent()) {
            a.send(new Hello(2, "holdfast-agent/0.0.9@old", TestTokens.DEFAULT_AGENT));
            assertThat(a.expect(HelloOk.class).protocolVersion()).isEqualTo(2);
            a.backup("old", BackupRestoreLoopbackTest.image(1, 16 * BS), BS, true);
        }
        assertThat(consistencyOf("old")).isEqualTo(Consistency.UNKNOWN);
    }

    @Test
    void hello_newerAgent_getsThisServersVersion() {
        try (AgentDriver a = harness.agent()) {
            a.send(new Hello(7, "holdfast-agent/9.0@future", TestTokens.DEFAULT_AGENT));
            assertThat(a.expect(HelloOk.class).protocolVersion()).isEqualTo(ProtocolLimits.PROTOCOL_VERSION);
        }
    }

    @Test
    void hello_version1_unsupportedVersion() {
        try (AgentDriver a = harness.agent()) {
            a.send(new Hello(1, "ancient", TestTokens.DEFAULT_AGENT));
            assertThat(a.expectErrorAndClose().code()).isEqualTo(ErrorCode.UNSUPPORTED_VERSION);
        }
    }

    @Test
    void commit_withConsistency_storedWithTheSnapshot() {
        byte[] image = BackupRestoreLoopbackTest.image(2, 16 * BS);
        try (AgentDriver a = harness.agent()) {
            assertThat(a.hello().protocolVersion()).isGreaterThanOrEqualTo(3);
            a.begin("app", BS, image.length, 0);
            a.sendEntriesAndBlocks(image, BS, 0, 16, true, null);
            a.send(new Commit(image.length, Consistency.APPLICATION));
            assertThat(a.expect(Committed.class).sequence()).isEqualTo(1);
            a.begin("app", BS, image.length, 1);
            a.sendEntriesAndBlocks(image, BS, 0, 16, true, null);
            a.send(new Commit(image.length, Consistency.CRASH));
            a.expect(Committed.class);
        }
        assertThat(harness.catalog().snapshots(new VolumeId("app"))).extracting(s -> s.consistency())
                .containsExactly(Consistency.APPLICATION, Consistency.CRASH);
    }

    @Test
    void runReport_version3InScope_recordedAndAcknowledged() {
        try (AgentDriver a = harness.agent(SCOPED)) {
            a.hello();
            a.send(report("mine"));
            assertThat(a.expect(RunRecorded.class)).isEqualTo(RunRecorded.INSTANCE);
        }
        assertThat(reported).containsExactly(report("mine"));
        assertThat(harness.catalog().volume(new VolumeId("mine"))).as("a report creates no volume").isEmpty();
    }

    @Test
    void runReport_outsideTheTokensScope_unauthorizedAndNothingRecorded() {
        try (AgentDriver a = harness.agent(SCOPED)) {
            a.hello();
            a.send(report("theirs"));
            var e = a.expectErrorAndClose();
            assertThat(e.code()).isEqualTo(ErrorCode.UNAUTHORIZED);
            assertThat(e.message()).contains("outside the token's volume scope");
        }
        assertThat(reported).isEmpty();
        assertThat(harness.audit().events()).extracting(AuditEvent::action).contains("agent.run-report");
    }

    @Test
    void runReport_onAVersion2Connection_badStateAndNothingRecorded() {
        try (AgentDriver a = harness.agent()) {
            a.send(new Hello(2, "holdfast-agent/0.0.9@old", TestTokens.DEFAULT_AGENT));
            a.expect(HelloOk.class);
            a.send(report("v"));
            var e = a.expectErrorAndClose();
            assertThat(e.code()).isEqualTo(ErrorCode.BAD_STATE);
            assertThat(e.message()).contains("protocol version 3");
        }
        assertThat(reported).isEmpty();
    }

    @Test
    void runReport_endBeforeStart_badFrameAndNothingRecorded() {
        try (AgentDriver a = harness.agent()) {
            a.hello();
            a.send(new RunReport("v", "schedule", 2_000, 1_000, RunReport.Result.SUCCEEDED, 0, 1, 0, 0, 1, Consistency.CRASH, ""));
            assertThat(a.expectErrorAndClose().code()).isEqualTo(ErrorCode.BAD_FRAME);
        }
        assertThat(reported).isEmpty();
    }
}
