package org.holdfast.server.stats;

import java.time.Clock;
import org.holdfast.common.protocol.RunReport;
import org.holdfast.server.catalog.AgentStore;
import org.holdfast.server.ingest.IngestObserver;
import org.holdfast.server.security.AccessPrincipal;
import org.holdfast.server.stats.TransferRates.Direction;

/**
 * Records what the ingest port reports: agent connections and backup results in the catalog's
 * {@link AgentStore} (one write per connection and per backup), bytes moved in the
 * {@link TransferRates} (in memory, per frame).
 *
 * <p>A connection is recorded under its token: a principal named {@code token:<id>(<name>)}. The
 * agent's version is what follows {@code /} in the first word of its HELLO agent name
 * ({@code holdfast-agent/0.2.0@host}); agents that send no version are recorded with none.
 */
public final class AgentLedger implements IngestObserver {
    private final AgentStore store;
    private final TransferRates rates;
    private final Clock clock;
    private volatile Runnable afterCommit = () -> { };

    public AgentLedger(AgentStore store, TransferRates rates, Clock clock) {
        this.store = store;
        this.rates = rates;
        this.clock = clock;
    }

    public AgentStore store() {
        return store;
    }

    /** Runs {@code action} after each committed backup (on the connection's lane: it must be quick). */
    public void afterCommit(Runnable action) {
        afterCommit = action;
    }

    @Override
    public void connected(AccessPrincipal principal, String remoteAddress, String agentName) {
        TokenName t = TokenName.of(principal.name());
        store.contact(t.id(), t.name(), remoteAddress, agentName, agentVersion(agentName), clock.millis());
    }

    @Override
    public void backupEnded(AccessPrincipal principal, String volume, boolean ok, String detail, long bytes) {
        store.result(TokenName.of(principal.name()).id(), new AgentStore.VolumeResult(volume, ok, detail, bytes, clock.millis()));
        if (ok) {
            afterCommit.run();
        }
    }

    /** Stores the run under the principal's token; a token with no recorded connection is refused (it always has one after HELLO). */
    @Override
    public void runReported(AccessPrincipal principal, String agentName, RunReport r) {
        AgentStore.Run run = new AgentStore.Run(r.volume(), r.trigger(), r.startMillis(), r.endMillis(), r.result().wireName(),
                r.exitCode(), r.attempts(), r.bytesRead(), r.bytesSent(), r.snapshotSequence(), r.consistency().code(), r.message(),
                agentVersion(agentName), clock.millis());
        if (!store.run(TokenName.of(principal.name()).id(), run)) {
            throw new IllegalStateException("no connection recorded for " + principal.name());
        }
    }

    @Override
    public void received(String volume, long bytes) {
        rates.record(Direction.INGEST, volume, bytes);
    }

    @Override
    public void restored(String volume, long bytes) {
        rates.record(Direction.RESTORE, volume, bytes);
    }

    /** The version in {@code product/version[@host]}, or "" if the name carries none. */
    static String agentVersion(String agentName) {
        int slash = agentName.indexOf('/');
        if (slash < 0) {
            return "";
        }
        int end = agentName.length();
        for (int i = slash + 1; i < agentName.length(); i++) {
            char c = agentName.charAt(i);
            if (c == '@' || c == ' ') {
                end = i;
                break;
            }
        }
        return agentName.substring(slash + 1, end);
    }

    /** A principal's token id and name; a principal that is not a token is its own id, with no name. */
    record TokenName(String id, String name) {
        static TokenName of(String principal) {
            if (principal.startsWith("token:")) {
                int open = principal.indexOf('(');
                if (open > 0 && principal.endsWith(")")) {
                    return new TokenName(principal.substring(6, open), principal.substring(open + 1, principal.length() - 1));
                }
                return new TokenName(principal.substring(6), "");
            }
            return new TokenName(principal, "");
        }
    }
}
