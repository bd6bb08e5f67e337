package org.holdfast.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CompletionException;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.server.engine.DedupUnavailableException;
import org.holdfast.server.ingest.cluster.DedupWorkerLostException;
import org.junit.jupiter.api.Test;

/**
 * What the agent is told when the master's dedup index cannot answer: the worker's name and what
 * to do, not "internal server error". A lost worker's call fails inside a CompletionException (the
 * master waits on every worker's answer), which must not hide the reason.
 */
class ConnectionHandlerErrorsTest {

    @Test
    void messageOf_workerLostInsideCompletionException_namesTheWorkerAndWhatToDo() {
        Throwable t = new CompletionException(new DedupWorkerLostException("dedup worker worker-2 is lost: its link closed;"
                + " run it again once the worker is back"));
        assertThat(ConnectionHandler.messageOf(t)).startsWith("dedup worker worker-2 is lost").contains("run it again")
                .doesNotContain("internal server error");
        assertThat(ConnectionHandler.codeOf(t)).as("transient: the agent runs the backup again").isEqualTo(ErrorCode.WORKER_UNAVAILABLE);
    }

    @Test
    void messageOf_noWorkerConnected_passesTheAdviceOn() {
        Throwable t = new DedupUnavailableException("no dedup worker is connected to this master; start the workers");
        assertThat(ConnectionHandler.messageOf(t)).isEqualTo("no dedup worker is connected to this master; start the workers");
        assertThat(ConnectionHandler.codeOf(t)).isEqualTo(ErrorCode.WORKER_UNAVAILABLE);
    }

    @Test
    void messageOf_otherInternalErrorInsideCompletionException_staysGeneric() {
        Throwable t = new CompletionException(new IllegalStateException("a detail for the server log only"));
        assertThat(ConnectionHandler.messageOf(t)).isEqualTo("internal server error (IllegalStateException); see the server log");
        assertThat(ConnectionHandler.codeOf(t)).isEqualTo(ErrorCode.INTERNAL);
    }
}
