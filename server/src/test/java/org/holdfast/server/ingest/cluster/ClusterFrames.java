package org.holdfast.server.ingest.cluster;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import org.holdfast.common.protocol.FrameDecoder;
import org.holdfast.common.protocol.Message;

/** The frames a master sends a test's raw socket, decoded by the real decoder. */
final class ClusterFrames {
    private ClusterFrames() {
    }

    /** Up to {@code max} frames, fewer if the master closes the connection first. */
    static List<Message> read(InputStream in, int max) throws IOException {
        EmbeddedChannel decode = new EmbeddedChannel(new FrameDecoder());
        DataInputStream data = new DataInputStream(in);
        List<Message> got = new ArrayList<>();
        while (got.size() < max) {
            int len;
            try {
                len = data.readInt();
            } catch (EOFException | java.net.SocketException closed) {
                break;
            }
            byte[] body = new byte[len];
            data.readFully(body);
            decode.writeInbound(Unpooled.buffer().writeInt(len).writeBytes(body));
            got.add(decode.readInbound());
        }
        decode.finishAndReleaseAll();
        return got;
    }
}
