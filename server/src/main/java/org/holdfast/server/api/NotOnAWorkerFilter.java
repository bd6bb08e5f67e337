package org.holdfast.server.api;

import com.fasterxml.jackson.databind.ObjectMapper;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.List;
import org.springframework.http.ProblemDetail;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * On a worker: answers every REST path the worker does not serve (volumes, snapshots, backups, jobs,
 * GC, retention, verify, statistics, agents, the agent port's details) with 409
 * {@code not-on-a-worker}, naming the master. A worker opens no data store, catalog, engine or GC,
 * so those endpoints are not there; without this they would answer a bare 404. Runs after Spring
 * Security, so an unauthenticated or unauthorized caller still gets 401 or 403 first.
 */
public final class NotOnAWorkerFilter extends OncePerRequestFilter {
    /** What a worker serves itself: sign-in, its own users, tokens and audit log, and its cluster membership. */
    static final List<String> SERVED = List.of("/api/v1/auth", "/api/v1/users", "/api/v1/tokens", "/api/v1/audit", "/api/v1/cluster");

    private final ProblemWriter writer;
    private final String master;

    /** {@code master}: the master's cluster port as configured ({@code holdfast.cluster.master}, host:port). */
    public NotOnAWorkerFilter(ObjectMapper json, String master) {
        this.writer = new ProblemWriter(json);
        this.master = master;
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        String path = request.getRequestURI().substring(request.getContextPath().length());
        if (!path.startsWith("/api/") || SERVED.stream().anyMatch(s -> path.equals(s) || path.startsWith(s + "/"))) {
            chain.doFilter(request, response);
            return;
        }
        ProblemDetail p = ProblemWriter.problem(409, "Not on a worker", "this node is a worker (holdfast.cluster.role=worker): it"
                + " serves the master's dedup calls and holds no volumes, snapshots, jobs or statistics; use the master's REST API"
                + " (the master's cluster port is " + master + ")");
        p.setType(ProblemTypes.NOT_ON_A_WORKER);
        writer.write(request, response, p);
    }
}
