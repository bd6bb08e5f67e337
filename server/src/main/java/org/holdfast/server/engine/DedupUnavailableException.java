package org.holdfast.server.engine;

/**
 * The dedup index cannot answer now (a part of it in another process is lost, or none is there):
 * the backup asking stops, taking nothing as a duplicate, and can simply run again. The message
 * names what is missing and what to do, and is meant for the agent's operator as it is.
 */
public class DedupUnavailableException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    public DedupUnavailableException(String message) {
        super(message);
    }
}
