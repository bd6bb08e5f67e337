package org.holdfast.client.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;
import org.junit.jupiter.api.Test;

class TransientHintTest {
    private static final AgentException LOST = new AgentException(ExitCode.TRANSIENT, "dedup worker w2 is lost", "for a backup");

    @Test
    void restore_hintNamesTheCommandAndTheBucketReadAfterLostAfter() {
        AgentException e = (AgentException) TransientHint.named(LOST, "restore");
        assertThat(e.exitCode()).isEqualTo(ExitCode.TRANSIENT);
        assertThat(e.getMessage()).isEqualTo("dedup worker w2 is lost");
        assertThat(e.hint()).contains("run 'holdfast-agent restore' again", "holdfast.cluster.lost-after", "bucket");
    }

    @Test
    void otherCommands_hintNamesTheCommandOnly_andABackupKeepsItsOwn() {
        assertThat(((AgentException) TransientHint.named(LOST, "snapshots")).hint())
                .contains("run 'holdfast-agent snapshots' again").doesNotContain("bucket");
        assertThat(TransientHint.named(LOST, "backup")).isSameAs(LOST);
        AgentException other = new AgentException(ExitCode.USAGE, "bad", "fix it");
        assertThat(TransientHint.named(other, "restore")).isSameAs(other);
    }
}
