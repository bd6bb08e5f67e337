package org.holdfast.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CompletionException;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ProtocolException;
import org.holdfast.server.catalog.CommitRejectedException;
import org.holdfast.server.catalog.UnknownSnapshotException;
import org.holdfast.server.engine.DedupUnavailableException;
import org.holdfast.server.ingest.cluster.DedupWorkerLostException;
import org.holdfast.server.store.StoreException;
import org.junit.jupiter.api.Test;

/**
 * What the agent is told when the master's dedup index cannot answer: the worker's name and what
 * to do, not "internal server error". A lost worker's call fails inside a CompletionException (the
 * master waits on every worker's answer), which must not hide the reason. And the other codes an
 * agent acts on: a refusal keeps its own text, a store fault never shows its path or key.
 */
class ErrorMappingTest {

    @Test
    void messageOf_workerLostInsideCompletionException_namesTheWorkerAndWhatToDo() {
        Throwable t = new CompletionException(new DedupWorkerLostException("dedup worker worker-2 is lost: its link closed;"
                + " run it again once the worker is back"));
        assertThat(ErrorMapping.messageOf(t)).startsWith("dedup worker worker-2 is lost").contains("run it again")
                .doesNotContain("internal server error");
        assertThat(ErrorMapping.codeOf(t)).as("transient: the agent runs the backup again").isEqualTo(ErrorCode.WORKER_UNAVAILABLE);
    }

    @Test
    void messageOf_noWorkerConnected_passesTheAdviceOn() {
        Throwable t = new DedupUnavailableException("no dedup worker is connected to this master; start the workers");
        assertThat(ErrorMapping.messageOf(t)).isEqualTo("no dedup worker is connected to this master; start the workers");
        assertThat(ErrorMapping.codeOf(t)).isEqualTo(ErrorCode.WORKER_UNAVAILABLE);
    }

    @Test
    void messageOf_otherInternalErrorInsideCompletionException_staysGeneric() {
        Throwable t = new CompletionException(new IllegalStateException("a detail for the server log only"));
        assertThat(ErrorMapping.messageOf(t)).isEqualTo("internal server error (IllegalStateException); see the server log");
        assertThat(ErrorMapping.codeOf(t)).isEqualTo(ErrorCode.INTERNAL);
    }

    @Test
    void messageOf_protocolRefusal_isItsTextWithoutTheCode() {
        Throwable t = new ProtocolException(ErrorCode.VOLUME_BUSY, "volume 'db' has a backup in progress");
        assertThat(t.getMessage()).as("the exception's own message names the code").startsWith("VOLUME_BUSY: ");
        assertThat(ErrorMapping.codeOf(t)).isEqualTo(ErrorCode.VOLUME_BUSY);
        assertThat(ErrorMapping.messageOf(t)).as("the ERROR frame carries the code apart").isEqualTo("volume 'db' has a backup in progress");
    }

    @Test
    void codeOf_commitRejected_mapsEachReasonToWhatTheAgentDoesNext() {
        assertThat(ErrorMapping.codeOf(new CommitRejectedException(CommitRejectedException.Reason.PARENT_MOVED, "moved")))
                .isEqualTo(ErrorCode.BAD_STATE);
        assertThat(ErrorMapping.codeOf(new CommitRejectedException(CommitRejectedException.Reason.BLOCK_SIZE_MISMATCH, "size")))
                .isEqualTo(ErrorCode.BLOCK_SIZE_MISMATCH);
        assertThat(ErrorMapping.codeOf(new CommitRejectedException(CommitRejectedException.Reason.BAD_ENTRIES, "entries")))
                .isEqualTo(ErrorCode.BAD_FRAME);
        assertThat(ErrorMapping.codeOf(new UnknownSnapshotException("db", 7))).isEqualTo(ErrorCode.UNKNOWN_SNAPSHOT);
    }

    @Test
    void messageOf_storeFault_hidesItsPathAndKey() {
        Throwable t = new StoreException("data log", "/secret/data/log-0001", "pbn 42", "read failed", null);
        assertThat(ErrorMapping.codeOf(t)).isEqualTo(ErrorCode.INTERNAL);
        assertThat(ErrorMapping.messageOf(t)).isEqualTo("internal server error (StoreException); see the server log")
                .doesNotContain("/secret");
    }

    @Test
    void tlsHint_namesTheLikelyCauseOfAFailedHandshake() {
        assertThat(ErrorMapping.tlsHint("error:10000438:SSL routines:OPENSSL_internal:TLSV1_ALERT_INTERNAL_ERROR"))
                .contains("pins", "fingerprint", "operations.md");
        assertThat(ErrorMapping.tlsHint("Received fatal alert: certificate_unknown")).contains("fingerprint");
        assertThat(ErrorMapping.tlsHint("not an SSL/TLS record: 00000012")).contains("does not speak TLS");
        assertThat(ErrorMapping.tlsHint("handshake timed out")).isEmpty();
    }

    @Test
    void stoppedRun_namesTheRunALostWorkerStopped() {
        assertThat(ErrorMapping.stoppedRun(false, true)).as("a restore of a lost worker's blocks, seen in an operator trial")
                .isEqualTo("restore stopped");
        assertThat(ErrorMapping.stoppedRun(true, false)).isEqualTo("backup stopped");
        assertThat(ErrorMapping.stoppedRun(false, false)).isEqualTo("request stopped");
    }
}
