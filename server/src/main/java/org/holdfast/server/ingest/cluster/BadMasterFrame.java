package org.holdfast.server.ingest.cluster;

import io.netty.channel.ChannelHandlerContext;
import java.lang.System.Logger.Level;
import org.holdfast.common.protocol.ErrorLinger;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.common.protocol.ProtocolException;

/**
 * How a worker's service (a {@link WorkerLinkService}: dedup, data, GC, counts check) refuses a frame from the
 * master that it cannot read: it logs it, answers the ERROR and closes the link after lingering, the
 * same way for every link.
 */
final class BadMasterFrame {
    private static final System.Logger LOG = System.getLogger(BadMasterFrame.class.getName());

    private BadMasterFrame() {
    }

    /**
     * Refuses {@code cause} if it is a bad frame ({@link ProtocolException}) of the link's {@code frames}
     * ("dedup", "data", "GC delta") and returns true; false for any other failure, which the caller passes on.
     */
    static boolean refuse(ChannelHandlerContext ctx, Throwable cause, String frames) {
        if (!(cause instanceof ProtocolException p)) {
            return false;
        }
        LOG.log(Level.WARNING, "the master sent a bad " + frames + " frame: " + p.getMessage() + "; closing the link");
        // lingering: the master may still be writing the refused frame (see ErrorLinger)
        ErrorLinger.sendAndClose(ctx.channel(), ErrorMessage.of(p), ErrorLinger.ERROR_LINGER_MILLIS);
        return true;
    }
}
