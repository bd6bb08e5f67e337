package org.holdfast.server.app;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.lang.annotation.Annotation;
import java.net.URI;
import org.holdfast.server.api.NeedsGcBookkeeping;
import org.holdfast.server.api.NeedsLocalBlocks;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.web.ErrorResponseException;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerInterceptor;

/**
 * Refuses every request to an endpoint marked with one annotation (on the method or its controller)
 * with a 409 problem, before the endpoint runs: what a store was created without makes it mean
 * nothing, or worse.
 */
final class RefusedEndpoints implements HandlerInterceptor {
    private final Class<? extends Annotation> marker;
    private final URI type;
    private final String title;
    private final String detail;

    private RefusedEndpoints(Class<? extends Annotation> marker, String type, String title, String detail) {
        this.marker = marker;
        this.type = URI.create(type);
        this.title = title;
        this.detail = detail;
    }

    /**
     * With GC bookkeeping off: every {@link NeedsGcBookkeeping} endpoint (GC runs, status, fsck,
     * holds, retention, deletions). On a store whose commits were never counted none of them would
     * mean anything, and a sweep would free referenced blocks.
     */
    static RefusedEndpoints gcOff() {
        return new RefusedEndpoints(NeedsGcBookkeeping.class, "urn:holdfast:problem:gc-bookkeeping-off", "GC bookkeeping is off",
                "garbage collection is off on this store (holdfast.gc.bookkeeping=off, fixed when the data directory "
                        + "was created, for benchmarking only): snapshots are not counted, so GC runs, fsck, retention, "
                        + "holds and deletions are refused");
    }

    /**
     * With {@code holdfast.cluster.data=workers}: every {@link NeedsLocalBlocks} endpoint (reclaim-now,
     * removing a worker). The master's own store holds none of the blocks: reclaim-now frees only the
     * master's range. Verify, fsck (the workers' GC counts) and the image API reach the workers and are served.
     */
    static RefusedEndpoints dataOnWorkers() {
        return new RefusedEndpoints(NeedsLocalBlocks.class, "urn:holdfast:problem:data-on-workers", "Blocks are on the workers",
                "this master keeps its blocks on the workers (holdfast.cluster.data=workers, experimental, fixed when the"
                        + " data directory was created), where reclaim-now does not reach yet; check the blocks with"
                        + " verify (POST /api/v1/verify), which reads every block from its worker and checks its fingerprint,"
                        + " and the workers' GC counts with fsck (POST /api/v1/gc/fsck);"
                        + " GC runs (POST /api/v1/gc/runs) free blocks on the workers. A worker cannot be"
                        + " removed either (its range's blocks live only there): replace a dead one"
                        + " (POST /api/v1/cluster/workers/{id}/replace)");
    }

    @Override
    public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler) {
        if (handler instanceof HandlerMethod m && (m.hasMethodAnnotation(marker)
                || AnnotatedElementUtils.hasAnnotation(m.getBeanType(), marker))) {
            ProblemDetail p = ProblemDetail.forStatusAndDetail(HttpStatus.CONFLICT, detail);
            p.setType(type);
            p.setTitle(title);
            throw new ErrorResponseException(HttpStatus.CONFLICT, p, null);
        }
        return true;
    }
}
