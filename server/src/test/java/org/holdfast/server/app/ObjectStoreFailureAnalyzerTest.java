package org.holdfast.server.app;

import static org.assertj.core.api.Assertions.assertThat;

import org.holdfast.server.store.object.ObjectStoreUnavailableException;
import org.holdfast.server.store.object.ObjectStoreUnavailableException.Reason;
import org.junit.jupiter.api.Test;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Each way an object store can be unusable at start gets its own next step, with the store's message kept. */
class ObjectStoreFailureAnalyzerTest {

    private static FailureAnalysis analyze(Reason reason) {
        var cause = new ObjectStoreUnavailableException(reason, "PUT hf/probe in bucket b failed: " + reason, null);
        return new ObjectStoreFailureAnalyzer().analyze(new RuntimeException("Error creating bean 'logArchive'", cause));
    }

    @Test
    void everyReason_namesTheStoreAndWhatToFix() {
        assertThat(analyze(Reason.UNREACHABLE).getAction()).contains("holdfast.store.s3.endpoint").contains("reachable");
        assertThat(analyze(Reason.NO_SUCH_BUCKET).getAction()).contains("Create the bucket").contains("holdfast.store.s3.bucket");
        assertThat(analyze(Reason.ACCESS_DENIED).getAction()).contains("credentials-file").contains("AWS_ACCESS_KEY_ID");
        assertThat(analyze(Reason.FAILING).getAction()).contains("503 Slow Down");
        assertThat(analyze(Reason.REJECTED).getAction()).contains("holdfast.store.s3.");
        for (Reason r : Reason.values()) {
            assertThat(analyze(r).getDescription()).startsWith("Holdfast cannot use its object store (holdfast.store.backend=s3): ")
                    .contains("failed: " + r);
        }
    }
}
