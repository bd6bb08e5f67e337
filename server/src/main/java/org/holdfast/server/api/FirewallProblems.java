package org.holdfast.server.api;

import com.fasterxml.jackson.databind.ObjectMapper;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.security.web.firewall.RequestRejectedException;
import org.springframework.security.web.firewall.RequestRejectedHandler;

/**
 * Requests Spring Security's firewall refuses (an encoded slash or dot segment, a ';' in the
 * path, a header with control characters) as a 400 invalid-request problem; by default the
 * exception escaped to the container and came back as a 500.
 */
public final class FirewallProblems implements RequestRejectedHandler {
    private final ProblemWriter writer;

    public FirewallProblems(ObjectMapper json) {
        this.writer = new ProblemWriter(json);
    }

    @Override
    public void handle(HttpServletRequest request, HttpServletResponse response, RequestRejectedException e) throws IOException {
        writer.write(request, response, ProblemWriter.problem(400, "Invalid request",
                "the request was refused: " + e.getMessage() + "; send plain path segments (volume names and ids as listed by the API)"));
    }
}
