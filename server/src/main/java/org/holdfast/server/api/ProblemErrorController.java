package org.holdfast.server.api;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.swagger.v3.oas.annotations.Hidden;
import jakarta.servlet.RequestDispatcher;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.net.URI;
import org.springframework.boot.web.servlet.error.ErrorController;
import org.springframework.http.ProblemDetail;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The servlet container's error page ({@code /error}): whatever reached it (an exception nothing
 * else handled, a {@code sendError} from a filter or from the container itself) is answered as a
 * problem detail instead of Spring Boot's {@code {timestamp, status, error, path}} body. Replaces
 * Boot's BasicErrorController.
 *
 * <p>A response already committed gets nothing: its body is under way (an image download), and any
 * byte added now would be taken for part of it. The container then closes the connection, so the
 * client sees a truncated body.
 */
@RestController
@Hidden
public class ProblemErrorController implements ErrorController {
    private final ProblemWriter writer;

    public ProblemErrorController(ObjectMapper json) {
        this.writer = new ProblemWriter(json);
    }

    @RequestMapping("${server.error.path:${error.path:/error}}")
    public void error(HttpServletRequest request, HttpServletResponse response) throws IOException {
        if (response.isCommitted()) {
            return;
        }
        Object code = request.getAttribute(RequestDispatcher.ERROR_STATUS_CODE);
        Object uri = request.getAttribute(RequestDispatcher.ERROR_REQUEST_URI);
        if (!(code instanceof Integer status)) {
            // asked for directly, not an error dispatch
            writer.write(request, response, ProblemWriter.problem(404, "Not found",
                    "no endpoint at " + request.getRequestURI() + "; GET /v3/api-docs (or docs/api.md) lists the API"));
            return;
        }
        String path = uri instanceof String s ? s : request.getRequestURI();
        ProblemDetail p = ProblemWriter.problem(status, null, detail(status, path, request));
        try {
            p.setInstance(URI.create(path));
        } catch (IllegalArgumentException e) {
            // a path the container let through but that is no URI reference: leave instance out
        }
        writer.write(request, response, p);
    }

    private static String detail(int status, String path, HttpServletRequest request) {
        Object message = request.getAttribute(RequestDispatcher.ERROR_MESSAGE);
        String said = message instanceof String m && !m.isBlank() ? m : null;
        return switch (status) {
            case 404 -> "no endpoint at " + path + "; GET /v3/api-docs (or docs/api.md) lists the API";
            case 405 -> path + " does not take this method";
            case 413 -> "the request body is over the limit of " + RequestBodyLimit.MAX_BYTES + " bytes";
            default -> status >= 500
                    ? "the server failed on this request; its log has the details (look for " + path + ")"
                    : said != null ? "the request was refused: " + said : "the request was refused; see docs/api.md for what this call takes";
        };
    }
}
