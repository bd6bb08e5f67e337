package org.holdfast.common.protocol;

import java.util.Objects;
import org.holdfast.common.model.Consistency;

/**
 * COMMIT (0x16), agent to server: every NEED is answered; make the snapshot durable. With
 * {@link Consistency#UNKNOWN} it travels in its version 2 form (8 bytes, what a v2 peer reads); any
 * other consistency adds the u8 of protocol version 3, which an agent sends only to a server whose
 * HELLO_OK said 3 or more.
 */
public record Commit(long volumeBytes, Consistency consistency) implements Message {
    public Commit {
        Objects.requireNonNull(consistency, "consistency");
    }

    /** The version 2 form: no consistency said. */
    public Commit(long volumeBytes) {
        this(volumeBytes, Consistency.UNKNOWN);
    }

    /** Body bytes: 8, or 9 with a consistency. */
    int bodyBytes() {
        return consistency == Consistency.UNKNOWN ? 8 : 9;
    }

    @Override
    public MessageType type() {
        return MessageType.COMMIT;
    }
}
