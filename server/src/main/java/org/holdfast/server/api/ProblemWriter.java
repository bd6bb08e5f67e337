package org.holdfast.server.api;

import com.fasterxml.jackson.databind.ObjectMapper;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;

/**
 * Writes a problem detail straight to the servlet response, for the places that answer before or
 * after Spring MVC (servlet filters, the firewall, the {@code /error} dispatch), where no message
 * converter and no content negotiation runs. Always {@code application/problem+json}.
 */
final class ProblemWriter {
    static final String PROBLEM_JSON = "application/problem+json";

    private final ObjectMapper json;

    ProblemWriter(ObjectMapper json) {
        this.json = json;
    }

    /** A problem of {@code status} with the type {@link ProblemTypes#forStatus} gives it. */
    static ProblemDetail problem(int status, String title, String detail) {
        HttpStatus s = HttpStatus.resolve(status);
        ProblemDetail p = ProblemDetail.forStatusAndDetail(s == null ? HttpStatus.INTERNAL_SERVER_ERROR : s, detail);
        p.setStatus(status);
        p.setType(ProblemTypes.forStatus(status));
        p.setTitle(title != null ? title : s != null ? s.getReasonPhrase() : "Error");
        return p;
    }

    /** Sets status and content type and writes {@code p}; does nothing to a response already committed. */
    void write(HttpServletRequest request, HttpServletResponse response, ProblemDetail p) throws IOException {
        if (response.isCommitted()) {
            return;
        }
        if (p.getInstance() == null && request.getRequestURI() != null) {
            p.setInstance(URI.create(safePath(request.getRequestURI())));
        }
        response.resetBuffer();
        response.setStatus(p.getStatus());
        response.setContentType(PROBLEM_JSON);
        response.setCharacterEncoding("UTF-8");
        json.writeValue(response.getOutputStream(), p);
    }

    /** The path as a URI reference, or "/" if the container let through one that is not (the firewall's business). */
    private static String safePath(String path) {
        try {
            return URI.create(path).toString();
        } catch (IllegalArgumentException e) {
            return "/";
        }
    }
}
