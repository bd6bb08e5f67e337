package org.holdfast.server.cluster;

/**
 * A worker id's node generation as the master keeps it (cluster version 7): {@code issued} the last
 * generation it sent a node of the id in REGISTERED, {@code acknowledged} the highest one a node showed
 * it had stored (its first heartbeat on that link, or a REGISTER presenting it). A node presenting a
 * generation below {@code acknowledged} holds an older copy of the range data ({@link NodeGenerations}).
 */
public record NodeGeneration(long issued, long acknowledged) {
    /** Nothing issued yet. */
    public static final NodeGeneration NONE = new NodeGeneration(0, 0);

    public NodeGeneration {
        if (acknowledged < 0 || issued < acknowledged) {
            throw new IllegalArgumentException("a node generation needs 0 <= acknowledged <= issued, got issued " + issued
                    + ", acknowledged " + acknowledged);
        }
    }
}
