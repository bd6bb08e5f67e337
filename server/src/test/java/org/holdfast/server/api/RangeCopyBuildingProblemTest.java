package org.holdfast.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import org.holdfast.server.store.RangeCopy;
import org.holdfast.server.store.RangeCopyBuildingException;
import org.junit.jupiter.api.Test;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;

/**
 * The image API's answer while its first block waits for a lost worker's range copy: 503 with
 * Retry-After (the copy's time left, within 1 to 30 s) and a body naming the worker and the copy's
 * progress, instead of a response that sends nothing until clients time out.
 */
class RangeCopyBuildingProblemTest {
    private final ProblemAdvice advice = new ProblemAdvice();

    @Test
    void rangeCopyBuilding_copyHalfWay_503RetryAfterItsTimeLeftAndTheProgress() {
        ResponseEntity<ProblemDetail> r = advice.rangeCopyBuilding(new RangeCopyBuildingException(281474976710700L,
                new RangeCopy.Progress(3, 4, 10, 48L << 20, 12)));
        assertThat(r.getStatusCode().value()).isEqualTo(503);
        assertThat(r.getHeaders().getFirst("Retry-After")).isEqualTo("12");
        ProblemDetail p = r.getBody();
        assertThat(p.getType()).isEqualTo(ProblemTypes.RANGE_COPY_BUILDING);
        assertThat(p.getDetail()).contains("PBN 281474976710700").contains("worker 3").contains("4 of 10 logs")
                .contains("48.0 MiB").contains("about 12 s left").contains("Retry-After");
        assertThat(p.getProperties()).containsEntry("worker", 3L).containsEntry("logsDone", 4).containsEntry("logsTotal", 10)
                .containsEntry("bytesDone", 48L << 20).containsEntry("secondsLeft", 12L);
    }

    @Test
    void rangeCopyBuilding_noLogIndexedYetOrLongToGo_retryAfterWithinBounds() {
        ResponseEntity<ProblemDetail> early = advice.rangeCopyBuilding(new RangeCopyBuildingException(7, new RangeCopy.Progress(3, 0, 10, 0, -1)));
        assertThat(early.getHeaders().getFirst("Retry-After")).isEqualTo("10");
        assertThat(early.getBody().getDetail()).contains("time left not known yet");
        assertThat(early.getBody().getProperties()).containsEntry("secondsLeft", null);
        ResponseEntity<ProblemDetail> slow = advice.rangeCopyBuilding(new RangeCopyBuildingException(7, new RangeCopy.Progress(3, 1, 900, 1, 3600)));
        assertThat(slow.getHeaders().getFirst("Retry-After")).as("a block may be copied long before the whole range").isEqualTo("30");
    }
}
