package org.holdfast.client.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.holdfast.client.AgentRun;
import org.junit.jupiter.api.Test;

/** A refused command line is one error line naming the mistake and where the options are, with nothing run. */
class UsageErrorTest {

    @Test
    void misspeltOption_namedFirstWithTheOptionMeant_noUsageDump() {
        // --sorce for --source: picocli alone reported only the missing --source, then 100 lines of usage
        AgentRun r = AgentRun.of("backup", "--volume", "vm1", "--sorce", "/tmp/none.img");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.stdout()).isEmpty();
        assertThat(r.stderr().strip().lines()).hasSize(1);
        assertThat(r.stderr()).startsWith("holdfast-agent: error: unknown option '--sorce'")
                .contains("--source").contains("did you mean --source?")
                .contains("run 'holdfast-agent backup --help' for the options").doesNotContain("Usage:");
    }

    @Test
    void missingOption_oneLineNamingIt() {
        AgentRun r = AgentRun.of("restore", "--volume", "vm1", "--snapshot", "1", "--json");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.stdout()).isEmpty();
        assertThat(r.stderr().strip().lines()).hasSize(1);
        assertThat(r.stderr()).contains("--target").contains("holdfast-agent restore --help").doesNotContain("Usage:");
    }

    @Test
    void misspeltSubcommand_suggestsTheSubcommand() {
        AgentRun r = AgentRun.of("bakup", "--volume", "vm1");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.stderr().strip().lines()).hasSize(1);
        assertThat(r.stderr()).contains("bakup").contains("backup").contains("holdfast-agent --help");
    }

    @Test
    void help_stillPrintsTheUsage() {
        AgentRun r = AgentRun.of("backup", "--help");
        assertThat(r.exit()).isZero();
        assertThat(r.stdout()).contains("Usage: holdfast-agent backup").contains("Exit codes:");
    }
}
