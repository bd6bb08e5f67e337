package org.holdfast.server.store;

/**
 * Where blocks live cannot store or serve them now (a worker holding or storing them is lost, or
 * refused a call): the backup asking stops with nothing committed and can simply run again; a
 * restore stops. The message names the worker and what to do, for the operator as it is.
 */
public class BlocksUnavailableException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    public BlocksUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
