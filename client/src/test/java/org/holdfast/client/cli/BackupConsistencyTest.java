package org.holdfast.client.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.holdfast.client.AgentRun;
import org.holdfast.client.FakeServer;
import org.holdfast.client.Images;
import org.holdfast.common.model.Consistency;
import org.holdfast.common.protocol.ProtocolLimits;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code backup --consistency}: what COMMIT says, against a version 3 server and a version 2 one. */
class BackupConsistencyTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;
    private FakeServer server;
    private Path image;

    @BeforeEach
    void start() throws Exception {
        server = new FakeServer();
        image = Images.create(dir.resolve("vol.img"), 64 * 4096, 4096, 1, 3);
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private AgentRun backup(String... extra) {
        List<String> a = new ArrayList<>(List.of("backup", "--server", server.address(), "--no-tls", "--volume", "vm1",
                "--source", image.toString(), "--state-dir", dir.resolve("state").toString(), "--json"));
        a.addAll(List.of(extra));
        return AgentRun.of(a.toArray(String[]::new));
    }

    @Test
    void backup_version3Server_commitCarriesTheConsistencyAskedFor() throws Exception {
        server.protocolVersion = 3;
        AgentRun plain = backup();
        assertThat(plain.exit()).as(plain.toString()).isZero();
        assertThat(JSON.readTree(plain.stdout()).path("consistency").asText()).isEqualTo("crash");
        AgentRun app = backup("--consistency", "application");
        assertThat(app.exit()).as(app.toString()).isZero();
        assertThat(JSON.readTree(app.stdout()).path("consistency").asText()).isEqualTo("application");
        assertThat(server.commits).containsExactly(Consistency.CRASH, Consistency.APPLICATION);
    }

    @Test
    void backup_version2Server_sendsTheVersion2CommitAndSaysSo() throws Exception {
        AgentRun app = backup("--consistency", "application");
        assertThat(app.exit()).as(app.toString()).isZero();
        assertThat(JSON.readTree(app.stdout()).path("consistency").asText()).isEqualTo("unknown");
        assertThat(app.stderr()).contains("protocol version 2").contains("unknown");
        assertThat(server.commits).containsExactly(Consistency.UNKNOWN);
    }

    @Test
    void backup_version2ServerRefusingNewerOffers_fallsBackToVersion2AndSaysSo() throws Exception {
        server.refusesOtherVersions = true; // what the real protocol 2 server does (the upgrade drill)
        AgentRun run = backup();
        assertThat(run.exit()).as(run.toString()).isZero();
        assertThat(server.offers).containsExactly(ProtocolLimits.PROTOCOL_VERSION, 2);
        assertThat(run.stderr()).contains("refused protocol version " + ProtocolLimits.PROTOCOL_VERSION).contains("talking version 2");
        assertThat(server.commits).containsExactly(Consistency.UNKNOWN);
    }

    @Test
    void backup_version2ServerRefusingOffer2_noRetryExitIntegrity() {
        server.refusesOtherVersions = true;
        server.protocolVersion = 1; // refuses even 2: nothing lower to offer
        AgentRun run = backup();
        assertThat(run.exit()).isEqualTo(6);
        assertThat(run.stderr()).contains("UNSUPPORTED_VERSION").contains("upgrade the server");
        assertThat(server.offers).containsExactly(ProtocolLimits.PROTOCOL_VERSION, 2);
        assertThat(server.commits).isEmpty();
    }

    @Test
    void backup_unknownConsistency_usageErrorAndNothingSent() {
        AgentRun bad = backup("--consistency", "perfect");
        assertThat(bad.exit()).isEqualTo(2);
        assertThat(bad.stderr()).contains("--consistency perfect").contains("'crash'");
        assertThat(server.commits).isEmpty();
    }
}
