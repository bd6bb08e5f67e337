package org.holdfast.server.app;

import java.io.IOException;
import java.io.Writer;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.valves.ErrorReportValve;
import org.apache.coyote.ActionCode;
import org.holdfast.server.api.ProblemTypes;
import org.springframework.http.HttpStatus;

/**
 * Tomcat's last-resort error page as a problem detail instead of an HTML page. It answers only
 * what Tomcat refuses before any servlet runs (an encoded slash or an invalid %-escape in the URL,
 * a malformed request line); everything else reaches Spring, whose error page is
 * {@code ProblemErrorController}. Installed as the host's error report valve (public, with a
 * no-argument constructor: Tomcat makes it by reflection).
 */
public class ProblemReportValve extends ErrorReportValve {
    @Override
    protected void report(Request request, Response response, Throwable throwable) {
        int status = response.getStatus();
        // as Tomcat's own: nothing for a success, a body already under way, or an error reported already
        if (status < 400 || response.getContentWritten() > 0 || !response.setErrorReported()) {
            return;
        }
        AtomicBoolean ioAllowed = new AtomicBoolean(false);
        response.getCoyoteResponse().action(ActionCode.IS_IO_ALLOWED, ioAllowed);
        if (!ioAllowed.get()) {
            return;
        }
        HttpStatus s = HttpStatus.resolve(status);
        String detail = status >= 500 ? "the server failed on this request; its log has the details"
                : "the request was refused before it reached the API (a malformed URL or request line, an encoded slash or an"
                        + " invalid %-escape in the path); send plain path segments (see docs/api.md)";
        String body = "{\"type\":\"" + ProblemTypes.forStatus(status) + "\",\"title\":\"" + (s == null ? "Error" : s.getReasonPhrase())
                + "\",\"status\":" + status + ",\"detail\":\"" + detail + "\"}";
        try {
            response.setContentType("application/problem+json");
            response.setCharacterEncoding("utf-8");
            Writer writer = response.getReporter();
            if (writer != null) {
                writer.write(body);
                response.finishResponse();
            }
        } catch (IOException | IllegalStateException e) {
            // the client is gone or the response cannot take a body: nothing more to do
        }
    }
}
