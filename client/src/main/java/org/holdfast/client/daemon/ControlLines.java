package org.holdfast.client.daemon;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * The control socket's framing: one JSON document per line, UTF-8, {@code \n}-terminated. A request
 * is at most {@link #MAX_REQUEST} bytes and an answer at most {@link #MAX_ANSWER}; the limit is
 * checked while reading, before the line grows past it, and a longer line is refused.
 *
 * <pre>
 * client -> daemon   {"command":"status"}\n
 *                    {"command":"run-now","volume":"vm1","wait":true}\n
 * daemon -> client   {"ok":true, ...}\n   or   {"ok":false,"error":"...","hint":"..."}\n
 *
 * a handoff (HandoffClient, ControlServer): one request, then many lines back
 * client -> daemon   {"command":"exec","args":["backup","--volume","vm1",...],"cwd":"/root","token":"..."}\n
 * daemon -> client   {"started":true}\n  then  {"out":"TEXT"}\n | {"err":"TEXT"}\n ...  then  {"exit":0}\n
 *                    or, refused before starting, {"ok":false,"error":"..."}\n
 * </pre>
 */
final class ControlLines {
    static final int MAX_REQUEST = 64 * 1024;
    static final int MAX_ANSWER = 4 * 1024 * 1024;

    private ControlLines() {
    }

    /** Reads one line without its terminator; null at end of stream before any byte. */
    static String read(InputStream in, int limit) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream(256);
        int b;
        while ((b = in.read()) >= 0) {
            if (b == '\n') {
                return line.toString(StandardCharsets.UTF_8);
            }
            if (line.size() >= limit) {
                throw new IOException("control line longer than " + limit + " bytes");
            }
            line.write(b);
        }
        if (line.size() == 0) {
            return null;
        }
        throw new IOException("control line cut short after " + line.size() + " bytes");
    }
}
