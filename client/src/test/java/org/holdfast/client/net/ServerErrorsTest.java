package org.holdfast.client.net;

import static org.assertj.core.api.Assertions.assertThat;

import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorMessage;
import org.junit.jupiter.api.Test;

class ServerErrorsTest {

    @Test
    void rejected_unauthorized_hintNamesEveryPlaceATokenComesFrom() {
        AgentException e = ServerErrors.rejected(ErrorMessage.of(ErrorCode.UNAUTHORIZED, "token refused: malformed token"));
        assertThat(e.getMessage()).contains("UNAUTHORIZED").contains("malformed token");
        assertThat(e.hint()).contains("--token-file").contains("--token").contains("HOLDFAST_TOKEN").contains("revoked");
        assertThat(e.exitCode()).isEqualTo(ExitCode.REJECTED);
    }
}
