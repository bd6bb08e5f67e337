package org.holdfast.server.api;

import jakarta.servlet.http.HttpServletRequest;
import java.net.URI;
import java.util.List;
import org.holdfast.server.app.OnStandaloneOrMaster;
import org.holdfast.server.jobs.Job;
import org.holdfast.server.jobs.JobState;
import org.holdfast.server.jobs.Jobs;
import org.holdfast.server.jobs.UnknownJobException;
import org.springframework.context.annotation.Conditional;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * Jobs: long operations (GC, compaction, fsck, reclaim-now) that run in the background. Reading is
 * a viewer's, cancelling an operator's (SecurityConfiguration). The endpoints that start jobs
 * belong to their resources (GcController) and answer 202 with the job and its Location.
 */
@RestController
@Conditional(OnStandaloneOrMaster.class)
public class JobController {
    private final Jobs jobs;

    public JobController(Jobs jobs) {
        this.jobs = jobs;
    }

    /** A page of jobs, newest first; pass {@code nextCursor} as {@code cursor} for the next page (null: no more). */
    public record JobPage(List<JobView> jobs, String nextCursor) {
    }

    /** Jobs newest first, optionally of one {@code kind} and {@code state}; {@code limit} 1..500. */
    @GetMapping("/api/v1/jobs")
    public JobPage list(@RequestParam(defaultValue = "50") int limit, @RequestParam(required = false) String cursor,
                        @RequestParam(required = false) String kind, @RequestParam(required = false) String state) {
        Long before = null;
        if (cursor != null && !cursor.isBlank()) {
            try {
                before = Long.parseLong(cursor.trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("cursor '" + cursor + "' is not one this server gave out; start again without a cursor");
            }
        }
        Jobs.Page page = jobs.list(new Jobs.Query(kind == null || kind.isBlank() ? null : kind.trim(),
                state == null || state.isBlank() ? null : JobState.parse(state), before, limit));
        return new JobPage(page.jobs().stream().map(JobView::of).toList(),
                page.nextCursor() == null ? null : page.nextCursor().toString());
    }

    @GetMapping("/api/v1/jobs/{id}")
    public JobView get(@PathVariable String id) {
        return JobView.of(jobs.get(id(id)));
    }

    /**
     * Asks a job to stop: a queued job is dropped at once, a running one stops at its next safe
     * point (nothing done is lost). 202 with the job as of now (poll it for the end); 409 if it
     * has already ended.
     */
    @PostMapping("/api/v1/jobs/{id}/cancel")
    @Audited("job.cancel")
    public ResponseEntity<JobView> cancel(@PathVariable String id, HttpServletRequest request) {
        Job j = jobs.cancel(id(id), Principals.name(request));
        return accepted(j);
    }

    /** 202 Accepted with the job and its URL in Location: how every endpoint that starts or stops a job answers. */
    static ResponseEntity<JobView> accepted(Job j) {
        return ResponseEntity.accepted().location(URI.create(JobView.url(j.id()))).body(JobView.of(j));
    }

    private static long id(String text) {
        try {
            long id = Long.parseLong(text);
            if (id > 0) {
                return id;
            }
        } catch (NumberFormatException e) {
            // an id that cannot exist is as unknown as one that does not
        }
        throw new UnknownJobException(text.length() > 40 ? text.substring(0, 40) + "..." : text);
    }
}
