package org.holdfast.client.daemon;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * One of a handed-off command's output streams, sent to the caller as {@code {"out":TEXT}} or
 * {@code {"err":TEXT}} lines: text is sent at each line end and each flush, so the caller sees
 * output as the command prints it.
 */
final class HandoffStream extends OutputStream {
    private final String name;
    private final FrameWriter frames;
    private final ByteArrayOutputStream pending = new ByteArrayOutputStream(256);

    /** Writes whole frames to the connection; shared by both streams so that frames never interleave. */
    interface FrameWriter {
        void write(Map<String, Object> frame) throws IOException;
    }

    HandoffStream(String name, FrameWriter frames) {
        this.name = name;
        this.frames = frames;
    }

    @Override
    public synchronized void write(int b) throws IOException {
        pending.write(b);
        if (b == '\n') {
            flush();
        }
    }

    @Override
    public synchronized void write(byte[] b, int off, int len) throws IOException {
        for (int i = off; i < off + len; i++) {
            write(b[i]);
        }
    }

    @Override
    public synchronized void flush() throws IOException {
        if (pending.size() > 0) {
            String text = pending.toString(StandardCharsets.UTF_8);
            pending.reset();
            frames.write(Map.of(name, text));
        }
    }

    @Override
    public void close() throws IOException {
        flush();
    }
}
