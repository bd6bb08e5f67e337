package org.holdfast.client.net;

import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;

/** {@code --server} names a port that answered, but not as the agent port does (the HTTP port, a TLS port without TLS). */
public final class WrongPortException extends AgentException {
    WrongPortException(String message, String hint) {
        super(ExitCode.NETWORK, message, hint);
    }
}
