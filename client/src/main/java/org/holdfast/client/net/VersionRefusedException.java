package org.holdfast.client.net;

import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;

/** The server refused the protocol version HELLO offered: a server of protocol 2, which takes no other offer. */
public final class VersionRefusedException extends AgentException {
    VersionRefusedException(ExitCode exit, String message, String hint) {
        super(exit, message, hint);
    }
}
