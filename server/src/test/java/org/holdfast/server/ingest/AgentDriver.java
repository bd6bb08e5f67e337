package org.holdfast.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.buffer.ByteBufAllocator;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.holdfast.common.compress.BlockCodec;
import org.holdfast.common.hash.BlockHasher;
import org.holdfast.common.hash.PossessionProof;
import org.holdfast.common.protocol.BackupBegin;
import org.holdfast.common.protocol.BackupReady;
import org.holdfast.common.protocol.Blocks;
import org.holdfast.common.protocol.Commit;
import org.holdfast.common.protocol.Committed;
import org.holdfast.common.protocol.Entries;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.common.protocol.FrameDecoder;
import org.holdfast.common.protocol.FrameEncoder;
import org.holdfast.common.protocol.Hello;
import org.holdfast.common.protocol.HelloOk;
import org.holdfast.common.protocol.ListSnapshots;
import org.holdfast.common.protocol.Message;
import org.holdfast.common.protocol.Need;
import org.holdfast.common.protocol.PayloadCodec;
import org.holdfast.common.protocol.ProtocolLimits;
import org.holdfast.common.protocol.Restore;
import org.holdfast.common.protocol.RestoreData;
import org.holdfast.common.protocol.RestoreEnd;
import org.holdfast.common.protocol.RestoreInfo;
import org.holdfast.common.protocol.SnapshotList;

/**
 * A minimal hand-written agent over the common codec, for tests: full backups of a byte array
 * (every LBN, or only the given ones), restores into a byte array verifying every fingerprint.
 * Received messages are copied out of their buffers at once, so nothing leaks. It sends
 * {@link TestTokens#DEFAULT_AGENT} in HELLO unless given another token, and possession tags as
 * {@link #tags(TagMode)} says (right ones by default).
 */
public final class AgentDriver implements AutoCloseable {
    private final EventLoopGroup group = new NioEventLoopGroup(1);
    private final BlockingQueue<Object> inbox = new LinkedBlockingQueue<>();
    private final Channel channel;
    private final FrameDecoder decoder = new FrameDecoder();
    private final BlockHasher hasher = new BlockHasher();
    private final String token;
    private volatile PossessionProof proof; // of the latest BACKUP_READY
    private TagMode tagMode = TagMode.RIGHT;

    /** Which possession tags ENTRIES carry: computed from the content, wrong ones, or none (0). */
    public enum TagMode { RIGHT, WRONG, NONE }

    /** A restore's content and what the server said about it. */
    public record Restored(RestoreInfo info, byte[] image, long blocksSent, int frames, long framedBlocks) {
    }

    /**
     * A RESTORE_DATA frame copied out of its buffer. For a block of a compressed frame (protocol 4),
     * {@code frameBlocks[i]} is the entry whose payload holds the frame and {@code members[i]} the
     * block's index in it; -1 and 0 for other blocks.
     */
    record DataFrame(long startLbn, int count, byte[] codecs, byte[] fps, byte[][] payloads, int[] members, int[] frameBlocks,
                     int[] frameMembers) {
        /** Block {@code i}'s bytes into {@code dst} (zeros for a zero block), decoding a frame if it is in one. */
        void block(int i, BlockCodec codec, int blockSize, byte[] dst) {
            int c = codecs[i];
            if (c == PayloadCodec.ZERO) {
                Arrays.fill(dst, 0, blockSize, (byte) 0);
            } else if (PayloadCodec.isFrame(c)) {
                int fb = frameBlocks[i];
                byte[] raw = new byte[frameMembers[i] * blockSize];
                codec.decompress(payloads[fb], 0, payloads[fb].length, raw, 0, raw.length);
                System.arraycopy(raw, members[i] * blockSize, dst, 0, blockSize);
            } else {
                codec.decode(c, payloads[i], 0, payloads[i].length, dst, 0, blockSize);
            }
        }
    }

    public AgentDriver(int port) {
        this(port, TestTokens.DEFAULT_AGENT);
    }

    /** An agent that sends {@code token} in HELLO. */
    public AgentDriver(int port, String token) {
        this.token = token;
        channel = new Bootstrap().group(group).channel(NioSocketChannel.class)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(decoder, new FrameEncoder(), new SimpleChannelInboundHandler<Message>() {
                            @Override
                            protected void channelRead0(ChannelHandlerContext ctx, Message m) {
                                if (m instanceof RestoreData d) {
                                    byte[][] payloads = new byte[d.count()][];
                                    for (int i = 0; i < d.count(); i++) {
                                        payloads[i] = new byte[d.lengths()[i]];
                                        d.copyPayload(i, payloads[i], 0);
                                    }
                                    int[] members = new int[d.count()];
                                    int[] frameBlocks = new int[d.count()];
                                    int[] frameMembers = new int[d.count()];
                                    for (int i = 0; i < d.count(); i++) {
                                        boolean framed = PayloadCodec.isFrame(d.codec(i));
                                        members[i] = d.memberIndex(i);
                                        frameBlocks[i] = framed ? d.frameBlock(i) : -1;
                                        frameMembers[i] = framed ? d.frameMemberCount(i) : 0;
                                    }
                                    inbox.add(new DataFrame(d.startLbn(), d.count(), d.codecs().clone(), d.fingerprints().clone(), payloads,
                                            members, frameBlocks, frameMembers));
                                } else {
                                    if (m instanceof BackupReady r) {
                                        proof = new PossessionProof(r.possessionSecret());
                                    } else if (m instanceof HelloOk ok) {
                                        // as the real agent does: what follows is read at the agreed version
                                        // (frames from 4, snapshot ids from 5), also for a test that sent its own HELLO
                                        decoder.protocolVersion(ok.protocolVersion());
                                    }
                                    inbox.add(m);
                                }
                            }

                            @Override
                            public void channelInactive(ChannelHandlerContext ctx) {
                                inbox.add("closed");
                            }

                            @Override
                            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                                inbox.add(cause);
                                ctx.close();
                            }
                        });
                    }
                }).connect("127.0.0.1", port).syncUninterruptibly().channel();
    }

    /** Sets which possession tags later ENTRIES carry. */
    public AgentDriver tags(TagMode mode) {
        this.tagMode = mode;
        return this;
    }

    /** The tag of {@code block} in the current session, as {@link #tags(TagMode)} wants it. */
    long tagOf(byte[] block, int off, int len, boolean zero) {
        if (zero || tagMode == TagMode.NONE) {
            return 0;
        }
        long t = proof.tag(block, off, len);
        return tagMode == TagMode.RIGHT ? t : t ^ 0x5a5a5a5a5a5a5a5aL;
    }

    /** Writes all of {@code ms} and flushes once: they reach the server in as few segments as possible. */
    public void sendPipelined(Message... ms) {
        for (Message m : ms) {
            channel.write(m);
        }
        channel.flush();
    }

    public void send(Message m) {
        channel.writeAndFlush(m).syncUninterruptibly();
    }

    public ByteBufAllocator alloc() {
        return channel.alloc();
    }

    /** The next message, failing the test on timeout; an ERROR is returned like any other. */
    public Object next() {
        try {
            Object o = inbox.poll(30, TimeUnit.SECONDS);
            assertThat(o).as("a message from the server within 30 s").isNotNull();
            return o;
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
    }

    @SuppressWarnings("unchecked")
    public <T> T expect(Class<T> type) {
        Object o = next();
        assertThat(o).as("expected %s", type.getSimpleName()).isInstanceOf(type);
        return (T) o;
    }

    /** Waits for an ERROR and then for the server to close the connection of its own accord. */
    public ErrorMessage expectErrorAndClose() {
        ErrorMessage e = expect(ErrorMessage.class);
        assertThat(next()).as("connection closed after ERROR").isEqualTo("closed");
        return e;
    }

    /**
     * Waits for an ERROR sent mid-backup, then stops sending as the real agent does, so the server,
     * which lingers reading after such an ERROR, closes at once. Only for ERRORs that linger: an
     * ERROR that should close the connection at once is checked by {@link #expectErrorAndClose()},
     * where no half-close of ours can hide a server that never closes.
     */
    public ErrorMessage expectErrorAndStop() {
        ErrorMessage e = expect(ErrorMessage.class);
        ((SocketChannel) channel).shutdownOutput().awaitUninterruptibly(); // fails harmlessly if already closed
        assertThat(next()).as("connection closed after ERROR").isEqualTo("closed");
        return e;
    }

    /**
     * Waits for an ERROR, checks that the server keeps reading for {@code open} afterwards (it
     * lingers mid-backup so the ERROR is not lost to a reset), then stops sending as an agent does
     * and waits for the server to close.
     */
    public ErrorMessage expectErrorLingering(java.time.Duration open) {
        ErrorMessage e = expect(ErrorMessage.class);
        try {
            assertThat(inbox.poll(open.toMillis(), TimeUnit.MILLISECONDS)).as("connection open %s after the ERROR", open).isNull();
        } catch (InterruptedException ie) {
            throw new IllegalStateException(ie);
        }
        ((SocketChannel) channel).shutdownOutput().syncUninterruptibly();
        assertThat(next()).as("connection closed once the agent stopped sending").isEqualTo("closed");
        return e;
    }

    /** Stops reading from the server (as a stuck or hostile agent does): what the server writes piles up. */
    public void stopReading() {
        channel.config().setAutoRead(false);
    }

    /** Writes {@code bytes} as they are, outside any frame encoding. */
    public void sendRaw(byte[] bytes) {
        channel.writeAndFlush(io.netty.buffer.Unpooled.wrappedBuffer(bytes)).syncUninterruptibly();
    }

    public HelloOk hello() {
        return hello(ProtocolLimits.PROTOCOL_VERSION);
    }

    /** HELLO offering protocol {@code version} (an older agent's); the decoder then accepts what the agreed version allows. */
    public HelloOk hello(int version) {
        send(new Hello(version, "test-agent", token));
        return expect(HelloOk.class); // the decoder took the agreed version as it read HELLO_OK
    }

    public BackupReady begin(String volume, int blockSize, long volumeBytes, long base) {
        send(new BackupBegin(volume, blockSize, volumeBytes, base));
        return expect(BackupReady.class);
    }

    /** BACKUP_BEGIN with the base snapshot's identity (protocol 5; 0 = unknown). */
    public BackupReady begin(String volume, int blockSize, long volumeBytes, long base, long baseSnapshotId) {
        send(new BackupBegin(volume, blockSize, volumeBytes, base, baseSnapshotId));
        return expect(BackupReady.class);
    }

    /** What an agent's backup did: the server's answer to BACKUP_BEGIN and its COMMITTED. */
    public record Backup(BackupReady ready, Committed committed) {
    }

    /**
     * A backup as the real agent makes it from a state of snapshot {@code base} with identity
     * {@code baseSnapshotId}: if the server answers INCREMENTAL with that parent, only the
     * {@code changed} LBNs are described (the agent believes the rest is as in its base), else
     * every LBN. Payloads zstd-compressed.
     */
    public Backup backupFromState(String volume, byte[] image, int blockSize, long base, long baseSnapshotId, long... changed) {
        BackupReady ready = begin(volume, blockSize, image.length, base, baseSnapshotId);
        long blocks = ProtocolLimits.blockCount(image.length, blockSize);
        if (ready.mode() == org.holdfast.common.protocol.BackupMode.INCREMENTAL && ready.parentSequence() == base) {
            for (long lbn : changed) {
                sendEntriesAndBlocks(image, blockSize, lbn, lbn + 1, true, null);
            }
        } else {
            sendEntriesAndBlocks(image, blockSize, 0, blocks, true, null);
        }
        send(new Commit(image.length));
        Committed c = expect(Committed.class);
        assertThat(c.sequence()).isGreaterThan(ready.parentSequence()); // past a sequence floor, not always + 1
        return new Backup(ready, c);
    }

    /** Backs up every LBN of {@code image}; payloads zstd-compressed when {@code compress}. */
    public Committed backup(String volume, byte[] image, int blockSize, boolean compress) {
        BackupReady ready = begin(volume, blockSize, image.length, 0);
        long blocks = ProtocolLimits.blockCount(image.length, blockSize);
        sendEntriesAndBlocks(image, blockSize, 0, blocks, compress, null);
        send(new Commit(image.length));
        Committed c = expect(Committed.class);
        assertThat(c.sequence()).isGreaterThan(ready.parentSequence()); // past a sequence floor, not always + 1
        return c;
    }

    /** Backs up every LBN of {@code image}, the blocks asked for sent as zstd frames of up to {@code frameBlocks} blocks (protocol 4). */
    public Committed backupFrames(String volume, byte[] image, int blockSize, int frameBlocks) {
        BackupReady ready = begin(volume, blockSize, image.length, 0);
        sendFrames(image, blockSize, frameBlocks);
        send(new Commit(image.length));
        Committed c = expect(Committed.class);
        assertThat(c.sequence()).isGreaterThan(ready.parentSequence()); // past a sequence floor, not always + 1
        return c;
    }

    /** After {@link #begin}: sends every LBN of {@code image} in ENTRIES, reads each NEED, uploads what is asked as zstd frames; no COMMIT. */
    public void sendFrames(byte[] image, int blockSize, int frameBlocks) {
        int blocks = (int) ProtocolLimits.blockCount(image.length, blockSize);
        List<Need> needs = new ArrayList<>();
        for (int start = 0; start < blocks; start += ProtocolLimits.MAX_RUN_ENTRIES) {
            int n = Math.min(ProtocolLimits.MAX_RUN_ENTRIES, blocks - start);
            byte[] fps = new byte[n * 32];
            long[] tags = new long[n];
            for (int i = 0; i < n; i++) {
                hasher.fingerprint(image, (start + i) * blockSize, blockSize, fps, i * 32);
                tags[i] = tagOf(image, (start + i) * blockSize, blockSize, isZero(fps, i * 32));
            }
            send(new Entries(start, n, fps, tags));
            needs.add(expect(Need.class));
        }
        byte[] raw = new byte[frameBlocks * blockSize];
        byte[] z = new byte[BlockCodec.maxCompressedLength(raw.length)];
        long[] members = new long[frameBlocks];
        try (BlockCodec codec = new BlockCodec()) {
            Blocks.Builder b = Blocks.builder(channel.alloc(), 1 << 20);
            for (Need need : needs) {
                int m = 0;
                for (int i = 0; i <= need.count(); i++) {
                    if (i < need.count() && need.isNeeded(i)) {
                        System.arraycopy(image, (int) (need.startLbn() + i) * blockSize, raw, m * blockSize, blockSize);
                        members[m++] = need.startLbn() + i;
                    }
                    if (m == frameBlocks || (i == need.count() && m > 0)) {
                        int n = codec.compress(raw, 0, m * blockSize, z, 0);
                        assertThat(n).as("test images for frames compress").isPositive();
                        if (!b.fitsFrame(n, m)) {
                            send(b.build());
                            b = Blocks.builder(channel.alloc(), 1 << 20);
                        }
                        b.addFrame(members[0], z, 0, n);
                        for (int k = 1; k < m; k++) {
                            b.addFrameMember(members[k]);
                        }
                        m = 0;
                    }
                }
            }
            if (b.count() > 0) {
                send(b.build());
            } else {
                b.close();
            }
        }
    }

    /**
     * Sends ENTRIES for LBNs [from, to) of {@code image}, reads each NEED, uploads what is asked.
     * {@code lie} (may be null) replaces the payload sent for the first block asked for.
     * Returns the number of payloads asked for.
     */
    public int sendEntriesAndBlocks(byte[] image, int blockSize, long from, long to, boolean compress, byte[] lie) {
        return sendEntriesAndBlocks(image, blockSize, from, to, compress, lie, () -> { });
    }

    /** As above, running {@code beforeBlocks} once every NEED is read (the lookups are done) and before any block is sent. */
    public int sendEntriesAndBlocks(byte[] image, int blockSize, long from, long to, boolean compress, byte[] lie, Runnable beforeBlocks) {
        byte[] block = new byte[blockSize];
        List<Need> needs = new ArrayList<>();
        for (long start = from; start < to; start += ProtocolLimits.MAX_RUN_ENTRIES) {
            int n = (int) Math.min(ProtocolLimits.MAX_RUN_ENTRIES, to - start);
            byte[] fps = new byte[n * 32];
            long[] tags = new long[n];
            for (int i = 0; i < n; i++) {
                blockOf(image, start + i, blockSize, block);
                hasher.fingerprint(block, 0, blockSize, fps, i * 32);
                tags[i] = tagOf(block, 0, blockSize, isZero(fps, i * 32));
            }
            send(new Entries(start, n, fps, tags));
        }
        for (long start = from; start < to; start += ProtocolLimits.MAX_RUN_ENTRIES) {
            Need need = expect(Need.class);
            assertThat(need.startLbn()).isEqualTo(start);
            needs.add(need);
        }
        beforeBlocks.run();
        int asked = 0;
        boolean lied = false;
        try (BlockCodec codec = new BlockCodec()) {
            byte[] z = new byte[BlockCodec.maxCompressedLength(blockSize)];
            Blocks.Builder b = Blocks.builder(channel.alloc(), 1 << 20);
            for (Need need : needs) {
                for (int i = 0; i < need.count(); i++) {
                    if (!need.isNeeded(i)) {
                        continue;
                    }
                    asked++;
                    long lbn = need.startLbn() + i;
                    blockOf(image, lbn, blockSize, block);
                    if (lie != null && !lied) {
                        System.arraycopy(lie, 0, block, 0, blockSize);
                        lied = true;
                    }
                    int zl = compress ? codec.compress(block, 0, blockSize, z, 0) : -1;
                    int len = zl > 0 ? zl : blockSize;
                    if (!b.fits(len)) {
                        send(b.build());
                        b = Blocks.builder(channel.alloc(), 1 << 20);
                    }
                    if (zl > 0) {
                        b.add(lbn, PayloadCodec.ZSTD, z, 0, zl);
                    } else {
                        b.add(lbn, PayloadCodec.RAW, block, 0, blockSize);
                    }
                }
            }
            if (b.count() > 0) {
                send(b.build());
            } else {
                b.close();
            }
        }
        return asked;
    }

    public Restored restore(String volume, long sequence) {
        send(new Restore(volume, sequence, 0));
        RestoreInfo info = expect(RestoreInfo.class);
        byte[] image = new byte[(int) info.volumeBytes()];
        byte[] block = new byte[info.blockSize()];
        byte[] digest = new byte[32];
        int frames = 0;
        long framedBlocks = 0;
        long expectedLbn = 0;
        try (BlockCodec codec = new BlockCodec()) {
            while (true) {
                Object o = next();
                if (o instanceof RestoreEnd end) {
                    assertThat(expectedLbn).isEqualTo(info.blockCount());
                    return new Restored(info, image, end.blocksSent(), frames, framedBlocks);
                }
                assertThat(o).as("restore frame").isInstanceOf(DataFrame.class);
                DataFrame d = (DataFrame) o;
                frames++;
                assertThat(d.startLbn()).isEqualTo(expectedLbn);
                for (int i = 0; i < d.count(); i++) {
                    long lbn = d.startLbn() + i;
                    d.block(i, codec, info.blockSize(), block);
                    framedBlocks += PayloadCodec.isFrame(d.codecs()[i]) ? 1 : 0;
                    if (d.codecs()[i] != PayloadCodec.ZERO) {
                        hasher.sha256(block, 0, block.length, digest, 0);
                        assertThat(digest).as("fingerprint of LBN %d", lbn).isEqualTo(Arrays.copyOfRange(d.fps(), i * 32, i * 32 + 32));
                    }
                    long at = lbn * info.blockSize();
                    int len = (int) Math.min(info.blockSize(), image.length - at);
                    System.arraycopy(block, 0, image, (int) at, len);
                }
                expectedLbn += d.count();
            }
        }
    }

    public SnapshotList list(String volume) {
        send(new ListSnapshots(volume));
        return expect(SnapshotList.class);
    }

    static boolean isZero(byte[] fps, int off) {
        for (int k = 0; k < 32; k++) {
            if (fps[off + k] != 0) {
                return false;
            }
        }
        return true;
    }

    static void blockOf(byte[] image, long lbn, int blockSize, byte[] dst) {
        long at = lbn * blockSize;
        int len = (int) Math.max(0, Math.min(blockSize, image.length - at));
        Arrays.fill(dst, (byte) 0);
        if (len > 0) {
            System.arraycopy(image, (int) at, dst, 0, len);
        }
    }

    public boolean isOpen() {
        return channel.isActive();
    }

    @Override
    public void close() {
        channel.close().syncUninterruptibly();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
