package org.holdfast.server.api;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.holdfast.server.jobs.Job;

/**
 * A job as REST shows it: state in lower case, times as ISO-8601 text (null until they happen),
 * progress (totals of -1 are not known; {@code etaSeconds} null when it cannot be estimated), the
 * result once it succeeded, the error once it failed or was cancelled, the newest log lines, and
 * its own URL.
 */
public record JobView(long id, String kind, String state, String submittedBy, String submittedAt, String startedAt,
                      String endedAt, Job.Progress progress, boolean cancelRequested, Map<String, Object> result,
                      String error, List<String> log, String url) {

    /** The URL of job {@code id}, also its Location header. */
    public static String url(long id) {
        return "/api/v1/jobs/" + id;
    }

    static JobView of(Job j) {
        return new JobView(j.id(), j.kind(), j.state().wireName(), j.submittedBy(), text(j.submittedAt()), text(j.startedAt()),
                text(j.endedAt()), j.progress(), j.cancelRequested(), j.result(), j.error(), j.log(), url(j.id()));
    }

    private static String text(Instant i) {
        return i == null ? null : i.toString();
    }
}
