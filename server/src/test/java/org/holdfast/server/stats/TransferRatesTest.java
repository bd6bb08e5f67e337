package org.holdfast.server.stats;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;
import org.holdfast.server.stats.TransferRates.Direction;
import org.junit.jupiter.api.Test;

class TransferRatesTest {
    @Test
    void rate_bytesInTheWindow_averagedAndForgottenAfterIt() {
        AtomicLong now = new AtomicLong(1_000_000);
        TransferRates r = new TransferRates(now::get);
        r.record(Direction.INGEST, "a", 6000);
        now.addAndGet(10_000);
        r.record(Direction.INGEST, "b", 3000);
        r.record(Direction.RESTORE, "a", 600);
        assertThat(r.rate(Direction.INGEST)).isEqualTo(9000.0 / TransferRates.WINDOW_SECONDS);
        assertThat(r.rates(Direction.INGEST)).containsEntry("a", 100.0).containsEntry("b", 50.0);
        assertThat(r.rates(Direction.RESTORE)).containsOnlyKeys("a");
        now.addAndGet(55_000); // a's bytes are 65 s old now, b's 55 s
        assertThat(r.rates(Direction.INGEST)).containsOnlyKeys("b");
        now.addAndGet(10_000);
        assertThat(r.rate(Direction.INGEST)).isZero();
        assertThat(r.rates(Direction.INGEST)).isEmpty();
        assertThat(r.total(Direction.INGEST)).as("totals stay").isEqualTo(9000);
        // a bucket of an earlier lap is reused, not added to
        r.record(Direction.INGEST, "a", 60);
        assertThat(r.rate(Direction.INGEST)).isEqualTo(1.0);
    }

    @Test
    void agentVersion_productSlashVersion_parsedElseEmpty() {
        assertThat(AgentLedger.agentVersion("holdfast-agent/0.2.0@db-host")).isEqualTo("0.2.0");
        assertThat(AgentLedger.agentVersion("holdfast-agent/0.2.0")).isEqualTo("0.2.0");
        assertThat(AgentLedger.agentVersion("holdfast-agent@db-host")).isEmpty();
        assertThat(AgentLedger.TokenName.of("token:abc(db host)")).isEqualTo(new AgentLedger.TokenName("abc", "db host"));
        assertThat(AgentLedger.TokenName.of("user:alice")).isEqualTo(new AgentLedger.TokenName("user:alice", ""));
    }
}
