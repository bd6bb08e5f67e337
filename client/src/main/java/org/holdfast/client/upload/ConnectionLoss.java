package org.holdfast.client.upload;

import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;

/**
 * A backup whose connection closed part-way without a word from the server (it stopped, restarted or
 * was killed, or the network dropped the connection): one line saying what that means for the snapshot
 * and what to do, in place of whatever the failing socket call said ("Broken pipe", a closed channel).
 */
final class ConnectionLoss {
    private ConnectionLoss() {
    }

    /** The failure to report for {@code network}, lost before COMMIT was sent or after ({@code commitSent}). */
    static AgentException of(String server, boolean commitSent, AgentException network) {
        if (commitSent) {
            return new AgentException(ExitCode.NETWORK, "the connection to the server " + server + " closed after the agent"
                    + " asked it to commit (did the server stop or restart?): the snapshot may or may not have been committed",
                    "once the server is up, list the volume's snapshots (holdfast-agent snapshots --volume NAME) and run the"
                            + " backup again either way", network);
        }
        return new AgentException(ExitCode.NETWORK, "the connection to the server " + server + " closed during the backup"
                + " (did the server stop or restart?); nothing of this backup was committed",
                "run the backup again once the server is up: blocks it already stored are not sent again", network);
    }
}
