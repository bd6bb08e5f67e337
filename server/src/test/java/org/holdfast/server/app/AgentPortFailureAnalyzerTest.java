package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import org.holdfast.server.catalog.ReferenceGuard;
import org.holdfast.server.ingest.AgentPortUnavailableException;
import org.holdfast.server.ingest.IngestHarness;
import org.holdfast.server.ingest.IngestSettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** A taken agent port stops the start with the port and the settings to change, not a bare "Address already in use". */
class AgentPortFailureAnalyzerTest {

    @TempDir
    Path dir;

    @Test
    void takenAgentPort_reportNamesPortAndSetting() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            int port = taken.getLocalPort();
            IngestSettings settings = new IngestSettings("127.0.0.1", port, 4, 1024, 8, 64L << 20, Duration.ofMinutes(10), "test");

            // before: Netty's undeclared BindException slipped past the RuntimeException catch, unexplained
            AgentPortUnavailableException e = catchThrowableOfType(
                    () -> new IngestHarness(dir, 0, ReferenceGuard.NONE, settings), AgentPortUnavailableException.class);

            assertThat(e).hasMessageContaining("cannot listen for agents on 127.0.0.1:" + port)
                    .hasMessageContaining("holdfast.ingest.port");
            FailureAnalysis a = new AgentPortFailureAnalyzer().analyze(new RuntimeException("Failed to start bean 'ingestLifecycle'", e));
            assertThat(a.getDescription()).startsWith("Holdfast cannot listen for agents on 127.0.0.1:" + port);
            assertThat(a.getAction()).contains("--holdfast.ingest.port=N").contains("--server HOST:PORT");
            assertThat(taken.isBound()).isTrue(); // the other listener keeps its port
        }
    }
}
