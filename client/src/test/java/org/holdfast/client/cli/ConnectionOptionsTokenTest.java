package org.holdfast.client.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConnectionOptionsTokenTest {
    @TempDir
    Path dir;

    @Test
    void token_fromFileWithTrailingNewline_firstLineStripped() throws Exception {
        ConnectionOptions o = new ConnectionOptions();
        o.tokenFile = Files.writeString(dir.resolve("t"), "hft_0123456789abcdef_secret\nignored second line\n");
        o.token = "from-the-command-line";
        assertThat(o.token()).isEqualTo("hft_0123456789abcdef_secret");
    }

    @Test
    void token_emptyOrMissingFile_usageErrorWithoutTheSecretOrAConnection() throws Exception {
        ConnectionOptions o = new ConnectionOptions();
        o.tokenFile = Files.writeString(dir.resolve("empty"), "\n");
        assertThatThrownBy(o::token).isInstanceOf(AgentException.class).hasMessageContaining("is empty")
                .satisfies(e -> assertThat(((AgentException) e).exitCode()).isEqualTo(ExitCode.USAGE));
        o.tokenFile = dir.resolve("missing");
        assertThatThrownBy(o::token).isInstanceOf(AgentException.class).hasMessageContaining("cannot read --token-file")
                .satisfies(e -> assertThat(((AgentException) e).exitCode()).isEqualTo(ExitCode.USAGE));
    }

    @Test
    void token_noFile_optionOrEnvironmentValueStripped_orEmpty() {
        ConnectionOptions o = new ConnectionOptions();
        o.token = "  hft_abc_def \n";
        assertThat(o.token()).isEqualTo("hft_abc_def");
        o.token = null;
        assertThat(o.token()).isEmpty();
    }
}
