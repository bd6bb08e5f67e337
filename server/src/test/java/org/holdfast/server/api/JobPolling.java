package org.holdfast.server.api;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Set;

/** Submit-and-wait for the API tests: polls a job's URL until it has ended. */
final class JobPolling {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Set<String> ENDED = Set.of("succeeded", "failed", "cancelled");
    private static final long TIMEOUT_MS = 120_000;

    private JobPolling() {
    }

    /** GETs a path and answers the body (with whatever client and token the test uses). */
    @FunctionalInterface
    interface Get {
        String body(String path) throws Exception;
    }

    /** Polls {@code url} (a job's Location) until the job has ended; answers the job. */
    static JsonNode awaitEnd(Get get, String url) {
        long deadline = System.currentTimeMillis() + TIMEOUT_MS;
        JsonNode job;
        try {
            while (true) {
                job = JSON.readTree(get.body(url));
                if (job.has("state") && ENDED.contains(job.get("state").asText())) {
                    return job;
                }
                assertThat(System.currentTimeMillis()).as("job at " + url + " still not ended: " + job).isLessThan(deadline);
                Thread.sleep(20);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** Polls until the job has ended, asserts it succeeded, and answers its result. */
    static JsonNode awaitResult(Get get, String url) {
        JsonNode job = awaitEnd(get, url);
        assertThat(job.get("state").asText()).as(job.toString()).isEqualTo("succeeded");
        return job.get("result");
    }
}
