package org.holdfast.client.qcow2;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;

/**
 * A few NBD connections to one export, so that the reading threads' requests overlap (one waits
 * for the disk while another's data crosses the socket) instead of queueing on one connection.
 */
final class NbdPool implements AutoCloseable {
    /** Connections per image: enough for the reading threads of a small machine; qemu-nbd serves them in parallel. */
    static final int CONNECTIONS = 4;

    private final List<NbdClient> all;
    private final ArrayBlockingQueue<NbdClient> idle;

    private NbdPool(List<NbdClient> all) {
        this.all = all;
        this.idle = new ArrayBlockingQueue<>(all.size(), false, all);
    }

    /** Opens {@code n} connections to the server on {@code socket}. */
    static NbdPool connect(Path socket, int n) throws IOException {
        List<NbdClient> clients = new ArrayList<>(n);
        try {
            for (int i = 0; i < n; i++) {
                clients.add(NbdClient.connect(socket));
            }
        } catch (IOException | RuntimeException e) {
            clients.forEach(NbdClient::close);
            throw e;
        }
        return new NbdPool(clients);
    }

    /** Size of the export in bytes. */
    long size() {
        return all.get(0).size();
    }

    /** As {@link NbdClient#read}, on whichever connection is free. */
    int read(ByteBuffer dst, long offset) throws IOException {
        NbdClient c;
        try {
            c = idle.take();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting for an NBD connection");
        }
        try {
            return c.read(dst, offset);
        } finally {
            idle.add(c);
        }
    }

    @Override
    public void close() {
        all.forEach(NbdClient::close);
    }
}
