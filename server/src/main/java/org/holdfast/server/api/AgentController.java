package org.holdfast.server.api;

import java.time.Instant;
import java.util.List;
import org.holdfast.server.catalog.AgentStore;
import org.holdfast.server.stats.AgentLedger;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/** The agents that connected to the ingest port, one per token (operator and admin: they show addresses and token names). */
@RestController
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

    /** One token's connections; {@code agentVersion} null when the agent did not send one. */
    public record AgentView(String tokenId, String tokenName, String remoteAddress, String agentName, String agentVersion,
                            String firstContact, String lastContact, long connections, List<ResultView> volumes) {
        static AgentView of(AgentStore.Agent a) {
            return new AgentView(a.tokenId(), a.tokenName(), a.remoteAddress(), a.agentName(),
                    a.agentVersion().isEmpty() ? null : a.agentVersion(), Instant.ofEpochMilli(a.firstContactMillis()).toString(),
                    Instant.ofEpochMilli(a.lastContactMillis()).toString(), a.connections(),
                    a.results().stream().map(ResultView::of).toList());
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
