package org.holdfast.server.app;

import jakarta.servlet.ServletException;
import java.io.IOException;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.valves.ValveBase;
import org.apache.coyote.ActionCode;
import org.holdfast.server.api.ImageController;

/**
 * Closes the connection at once, without finishing the response, when a handler set
 * {@link ImageController#ABORT_CONNECTION}: a body that cannot be completed correctly must end
 * visibly short (fewer bytes than Content-Length, or no last chunk), and nothing else (no error
 * page) may be appended to it. The servlet API has no such call, so this is Tomcat's.
 */
final class ConnectionAbortValve extends ValveBase {
    ConnectionAbortValve() {
        super(true);
    }

    @Override
    public void invoke(Request request, Response response) throws IOException, ServletException {
        getNext().invoke(request, response);
        Object cause = request.getAttribute(ImageController.ABORT_CONNECTION);
        if (cause != null) {
            response.getCoyoteResponse().action(ActionCode.CLOSE_NOW, cause instanceof Throwable t ? t : null);
        }
    }
}
