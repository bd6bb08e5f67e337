package org.holdfast.server.api;

import com.fasterxml.jackson.databind.ObjectMapper;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Caps request bodies at {@value #MAX_BYTES} bytes (every body the API takes is a small JSON
 * document). A declared Content-Length over the cap is refused with 413 before anything reads the
 * body; a chunked body is counted as it is read and the read fails at the cap with
 * {@link BodyTooLargeException}, which {@link ProblemAdvice} answers with 413.
 */
public final class RequestBodyLimit extends OncePerRequestFilter {
    /** 1 MiB. */
    public static final long MAX_BYTES = 1 << 20;

    private final ProblemWriter writer;

    public RequestBodyLimit(ObjectMapper json) {
        this.writer = new ProblemWriter(json);
    }

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        long declared = request.getContentLengthLong();
        if (declared > MAX_BYTES) {
            // the body is not read: close the connection rather than drain a large upload
            response.setHeader("Connection", "close");
            writer.write(request, response, ProblemWriter.problem(413, "Request body too large",
                    "the request body of " + declared + " bytes is over the limit of " + MAX_BYTES
                            + " bytes; every call of this API takes a small JSON document (see docs/api.md)"));
            return;
        }
        chain.doFilter(declared >= 0 ? request : new Counted(request), response);
    }

    /** Thrown while reading a body without Content-Length that goes past the cap. */
    public static final class BodyTooLargeException extends IOException {
        BodyTooLargeException() {
            super("the request body is over the limit of " + MAX_BYTES
                    + " bytes; every call of this API takes a small JSON document (see docs/api.md)");
        }
    }

    /** A request whose input stream fails once more than {@link #MAX_BYTES} were read. */
    private static final class Counted extends HttpServletRequestWrapper {
        private ServletInputStream in;

        Counted(HttpServletRequest request) {
            super(request);
        }

        @Override
        public ServletInputStream getInputStream() throws IOException {
            if (in == null) {
                in = new CountingStream(super.getInputStream());
            }
            return in;
        }
    }

    private static final class CountingStream extends ServletInputStream {
        private final ServletInputStream in;
        private long read;

        CountingStream(ServletInputStream in) {
            this.in = in;
        }

        @Override
        public int read() throws IOException {
            int b = in.read();
            if (b >= 0) {
                count(1);
            }
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            int n = in.read(b, off, len);
            if (n > 0) {
                count(n);
            }
            return n;
        }

        private void count(int n) throws IOException {
            read += n;
            if (read > MAX_BYTES) {
                throw new BodyTooLargeException();
            }
        }

        @Override
        public boolean isFinished() {
            return in.isFinished();
        }

        @Override
        public boolean isReady() {
            return in.isReady();
        }

        @Override
        public void setReadListener(ReadListener listener) {
            in.setReadListener(listener);
        }
    }
}
