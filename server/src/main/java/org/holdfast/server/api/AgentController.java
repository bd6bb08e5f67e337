package org.holdfast.server.api;

import io.swagger.v3.oas.annotations.media.Schema;
import java.time.Instant;
import java.util.List;
import org.holdfast.common.id.SnapshotId;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.model.Consistency;
import org.holdfast.server.app.OnStandaloneOrMaster;
import org.holdfast.server.catalog.AgentStore;
import org.holdfast.server.stats.AgentLedger;
import org.springframework.context.annotation.Conditional;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/** The agents that connected to the ingest port, one per token (operator and admin: they show addresses and token names). */
@RestController
@Conditional(OnStandaloneOrMaster.class)
@RequestMapping("/api/v1/agents")
public class AgentController {
    private final AgentLedger ledger;

    public AgentController(AgentLedger ledger) {
        this.ledger = ledger;
    }

    @GetMapping
    public List<AgentView> agents() {
        return ledger.store().list().stream().map(AgentView::of).toList();
    }

    /**
     * One token's connections; {@code agentVersion} null when the agent did not send one; {@code runs}:
     * the last runs its daemon reported, most recent first (at most 10 per volume).
     */
    public record AgentView(String tokenId, String tokenName, String remoteAddress, String agentName, String agentVersion,
                            String firstContact, String lastContact, long connections, List<ResultView> volumes,
                            List<RunView> runs) {
        static AgentView of(AgentStore.Agent a) {
            return new AgentView(a.tokenId(), a.tokenName(), a.remoteAddress(), a.agentName(),
                    a.agentVersion().isEmpty() ? null : a.agentVersion(), Instant.ofEpochMilli(a.firstContactMillis()).toString(),
                    Instant.ofEpochMilli(a.lastContactMillis()).toString(), a.connections(),
                    a.results().stream().map(ResultView::of).toList(), a.runs().stream().map(RunView::of).toList());
        }
    }

    /**
     * One run of the agent daemon's backup of a volume, as the daemon reported it: {@code result} is
     * {@code succeeded}, {@code failed} or {@code interrupted}; {@code exitCode} the agent's (docs/agent.md);
     * {@code snapshotId} null when no snapshot committed; {@code consistency} as in the snapshot.
     */
    public record RunView(String volume, String trigger, String start, String end, double seconds,
                          @Schema(allowableValues = {"succeeded", "failed", "interrupted"})
                          String result, int exitCode, int attempts, String message, long bytesRead, long bytesSent,
                          String snapshotId,
                          @Schema(allowableValues = {"application", "crash", "unknown"})
                          String consistency, String agentVersion, String reportedAt) {
        static RunView of(AgentStore.Run r) {
            Consistency c = Consistency.fromCode(r.consistency());
            return new RunView(r.volume(), r.trigger(), Instant.ofEpochMilli(r.startMillis()).toString(),
                    Instant.ofEpochMilli(r.endMillis()).toString(), (r.endMillis() - r.startMillis()) / 1000.0, r.result(),
                    r.exitCode(), r.attempts(), r.message(), r.bytesRead(), r.bytesSent(),
                    r.snapshotSequence() == 0 ? null : new SnapshotId(new VolumeId(r.volume()), r.snapshotSequence()).toString(),
                    (c == null ? Consistency.UNKNOWN : c).wireName(), r.agentVersion().isEmpty() ? null : r.agentVersion(),
                    Instant.ofEpochMilli(r.receivedMillis()).toString());
        }
    }

    /** The last backup of one volume by this token: {@code result} is {@code success} or {@code error}. */
    public record ResultView(String volume, String result, String message, long bytes, String at) {
        static ResultView of(AgentStore.VolumeResult r) {
            return new ResultView(r.volume(), r.ok() ? "success" : "error", r.message(), r.bytes(),
                    Instant.ofEpochMilli(r.atMillis()).toString());
        }
    }
}
