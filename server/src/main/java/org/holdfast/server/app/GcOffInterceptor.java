package org.holdfast.server.app;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.net.URI;
import org.holdfast.server.api.NeedsGcBookkeeping;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.web.ErrorResponseException;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerInterceptor;

/**
 * With GC bookkeeping off, refuses every request marked {@link NeedsGcBookkeeping} (all of
 * {@code GcController}: runs, status, fsck, holds; all of {@code RetentionController}: named policies,
 * volume retention, the simulator; and volume and snapshot deletion in
 * {@code VolumeController}) with a 409 problem before it reaches the GC:
 * on a store whose commits were never counted, none of them would mean anything, and a sweep
 * would free referenced blocks.
 */
final class GcOffInterceptor implements HandlerInterceptor {
    /** Problem type of a GC request on a store created with bookkeeping off. */
    static final URI GC_OFF = URI.create("urn:holdfast:problem:gc-bookkeeping-off");

    @Override
    public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler) {
        if (handler instanceof HandlerMethod m && (m.hasMethodAnnotation(NeedsGcBookkeeping.class)
                || AnnotatedElementUtils.hasAnnotation(m.getBeanType(), NeedsGcBookkeeping.class))) {
            ProblemDetail p = ProblemDetail.forStatusAndDetail(HttpStatus.CONFLICT,
                    "garbage collection is off on this store (holdfast.gc.bookkeeping=off, fixed when the data directory "
                            + "was created, for benchmarking only): snapshots are not counted, so GC runs, fsck, retention, "
                            + "holds and deletions are refused");
            p.setType(GC_OFF);
            p.setTitle("GC bookkeeping is off");
            throw new ErrorResponseException(HttpStatus.CONFLICT, p, null);
        }
        return true;
    }
}
