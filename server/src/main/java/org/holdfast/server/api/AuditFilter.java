package org.holdfast.server.api;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.time.Clock;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.holdfast.server.security.AuditEvent;
import org.holdfast.server.security.AuditLog;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.HandlerMapping;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Audits every state-changing REST call (POST, PUT, PATCH, DELETE) as one entry: principal, source
 * address, action (the handler's {@link Audited} name), target ({@code volume:NAME},
 * {@code volume:NAME@SEQ}, {@code worker:ID} ... from the path), result from the status (2xx/3xx
 * ok, 401/403 denied, 409 conflict, else failed) and, for a refusal, the error's message as
 * detail. Never the request body, headers or query (they may hold secrets).
 *
 * <p>It sits inside Spring Security's chain, right after the bearer token filter and before
 * authorization (see SecurityConfiguration), so calls the chain refuses are recorded as
 * {@code denied} too; for those the handler is looked up here, so their action and target are the
 * same as for an accepted call.
 */
public class AuditFilter extends OncePerRequestFilter {
    private static final Set<String> CHANGING = Set.of("POST", "PUT", "PATCH", "DELETE");
    private static final int MAX_DETAIL = 300;

    private final AuditLog audit;
    private final Clock clock;
    private final HandlerMapping handlers;

    /** {@code handlers} finds the handler of a call refused before dispatch; null: such calls get {@code http.METHOD}. */
    public AuditFilter(AuditLog audit, Clock clock, HandlerMapping handlers) {
        this.audit = audit;
        this.clock = clock;
        this.handlers = handlers;
    }

    @Override
    protected boolean shouldNotFilter(HttpServletRequest request) {
        return !CHANGING.contains(request.getMethod().toUpperCase(Locale.ROOT));
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        long start = clock.millis();
        String principal = Principals.name(request); // the bearer filter ran: the caller is known now
        Throwable thrown = null;
        try {
            chain.doFilter(request, response);
        } catch (IOException | ServletException | RuntimeException e) {
            thrown = e;
            throw e;
        } finally {
            boolean dispatched = handlerMatched(request);
            if (!dispatched) {
                lookUpHandler(request);
            }
            if (!(dispatched && recordedByHandler(request))) {
                audit.record(event(request, response, start, thrown, principal));
            }
        }
    }

    /** Sets the handler and path variables of a call that never reached the dispatcher (refused by the chain). */
    private void lookUpHandler(HttpServletRequest request) {
        if (handlers == null) {
            return;
        }
        try {
            handlers.getHandler(request);
        } catch (Exception e) {
            // no handler for that path: recorded as http.METHOD with the path as target
        }
    }

    private static boolean recordedByHandler(HttpServletRequest request) {
        return request.getAttribute(HandlerMapping.BEST_MATCHING_HANDLER_ATTRIBUTE) instanceof HandlerMethod m
                && m.getMethodAnnotation(Audited.class) != null && m.getMethodAnnotation(Audited.class).byHandler();
    }

    private static AuditEvent event(HttpServletRequest request, HttpServletResponse response, long time, Throwable thrown,
                                    String principal) {
        String result;
        if (thrown != null) {
            String n = thrown.getClass().getSimpleName();
            result = n.contains("AccessDenied") || n.contains("Authentication") ? "denied" : "failed";
        } else {
            result = result(response.getStatus());
        }
        Object handled = request.getAttribute(DispatcherServlet.EXCEPTION_ATTRIBUTE);
        Throwable cause = thrown != null ? thrown : handled instanceof Throwable t ? t : null;
        String detail = "ok".equals(result) ? "" : response.getStatus() + (cause == null || cause.getMessage() == null ? ""
                : " " + cut(cause.getMessage()));
        return new AuditEvent(time, principal, request.getRemoteAddr() + ":" + request.getRemotePort(),
                action(request), target(request), result, detail);
    }

    static String result(int status) {
        if (status == 401 || status == 403) {
            return "denied";
        }
        if (status == 409) {
            return "conflict";
        }
        return status < 400 ? "ok" : "failed";
    }

    /** The handler's {@link Audited} name; without one (no handler matched, or a missing annotation) {@code http.METHOD}. */
    static String action(HttpServletRequest request) {
        Object h = request.getAttribute(HandlerMapping.BEST_MATCHING_HANDLER_ATTRIBUTE);
        if (h instanceof HandlerMethod m) {
            Audited a = m.getMethodAnnotation(Audited.class);
            if (a != null) {
                return a.value();
            }
        }
        return "http." + request.getMethod().toLowerCase(Locale.ROOT);
    }

    /** Request attribute a handler sets to the audit target when the path does not name it. */
    static final String TARGET_ATTRIBUTE = "holdfast.audit.target";

    @SuppressWarnings("unchecked")
    static String target(HttpServletRequest request) {
        Object vars = request.getAttribute(HandlerMapping.URI_TEMPLATE_VARIABLES_ATTRIBUTE);
        if (vars instanceof Map<?, ?> m) {
            Map<String, String> v = (Map<String, String>) m;
            // the route the handler mapping matched, not the raw URI: /api/v1/%76olumes/db1 is the same call
            // as /api/v1/volumes/db1 and must name the same target
            String route = request.getAttribute(HandlerMapping.BEST_MATCHING_PATTERN_ATTRIBUTE) instanceof String r ? r : "";
            if (route.startsWith("/api/v1/volumes/") && v.get("name") != null) {
                String snapshot = v.get("snapshot"); // an id (volume@sequence) or the sequence alone: the sequence is logged
                return "volume:" + cut(v.get("name")) + (snapshot == null ? "" : "@" + cut(snapshot.substring(snapshot.lastIndexOf('@') + 1)));
            }
            if (route.startsWith("/api/v1/users/") && v.get("name") != null) {
                return "user:" + cut(v.get("name"));
            }
            if (route.startsWith("/api/v1/tokens/") && v.get("id") != null) {
                return "token:" + cut(v.get("id"));
            }
            if (route.startsWith("/api/v1/retention/policies/") && v.get("name") != null) {
                return "policy:" + cut(v.get("name"));
            }
            if (route.startsWith("/api/v1/jobs/") && v.get("id") != null) {
                return "job:" + cut(v.get("id"));
            }
            if (route.startsWith("/api/v1/cluster/workers/") && v.get("id") != null) {
                // a rebind done names the token too (set by the handler): which worker went to which token is the trail of a theft
                return request.getAttribute(TARGET_ATTRIBUTE) instanceof String t ? cut(t) : "worker:" + cut(v.get("id"));
            }
        }
        if (request.getAttribute(TARGET_ATTRIBUTE) instanceof String t) {
            return cut(t); // named in the body (a created volume), set by the handler
        }
        return handlerMatched(request) ? "" : "path:" + cut(request.getRequestURI());
    }

    private static boolean handlerMatched(HttpServletRequest request) {
        return request.getAttribute(HandlerMapping.BEST_MATCHING_HANDLER_ATTRIBUTE) instanceof HandlerMethod;
    }

    private static String cut(String s) {
        return s.length() <= MAX_DETAIL ? s : s.substring(0, MAX_DETAIL) + "...";
    }
}
